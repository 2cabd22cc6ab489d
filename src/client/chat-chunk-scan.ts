/*
 * A scan of one chat completion chunk (an SSE event's data) for the few fields ResponseCollector reads, without
 * JSON.parse building the whole object: the collector's per-event hot path (issue 17, part 4). JSON.parse of a
 * typical ~230-character chunk costs ~1.3 µs and allocates the chunk's objects and strings, most of which (id, model,
 * created, logprobs) nothing reads; this scan validates the same text and slices out the one delta string.
 *
 * It is hand-written on purpose (no library parses JSON without building it faster than V8's JSON.parse), and it is
 * only a fast path: it answers for the common shape of a chunk and gives undefined for anything else, which the
 * collector then parses exactly as before. So its one obligation is that when it answers, its answer is exactly what
 * the JSON.parse path would have read (test/client/chat-chunk-scan.test.ts checks this on real and generated chunks):
 * - the whole text is valid JSON (strings, escapes, numbers, literals, nesting and whitespace as RFC 8259 says), an
 *   object, and not an error object (`error` absent or null, `object` not "error");
 * - `choices` is absent or an array of at most one object; `usage` is absent or null (the chunk that carries usage,
 *   one per stream, takes the JSON.parse path);
 * - the choice's `delta` is absent, null or an object; its `finish_reason` absent, null or a string without escapes;
 * - the delta's `content`, `reasoning_content` and `reasoning` are absent, null or strings (escapes are decoded by
 *   JSON.parse of that one string literal), and `tool_calls` and `function_call` absent or null;
 * - no field it reads appears twice in one object (JSON.parse keeps the last; the scan does not try), and no key has
 *   an escape (`"cho\u0069ces"` is `choices` to JSON.parse).
 * Everything else (other keys, at any depth) is validated and skipped.
 */

/** What the collector reads from one chunk, as the JSON.parse path reads it. */
export interface ChatChunkFields {
  /** `choices[0]` exists (an object). */
  hasChoice: boolean;
  /** The choice's `delta` is an object. */
  hasDelta: boolean;
  /** The delta's string fields; undefined when absent or null. */
  content: string | undefined;
  reasoningContent: string | undefined;
  reasoning: string | undefined;
  /** The choice's `finish_reason` when it is a string. */
  finishReason: string | undefined;
  /** Where the content's text starts and ends in the chunk, when it is a string without escapes; else -1. */
  contentStart: number;
  contentEnd: number;
}

/** Deepest nesting skipped before the scan gives up (JSON.parse then takes the chunk). */
const MAX_DEPTH = 32;
/**
 * Shorter strings are sliced out of the chunk's text; longer ones are decoded by JSON.parse of their literal. V8 copies
 * a slice shorter than 13 characters but makes a longer one a view that keeps the whole chunk text alive, and an
 * answer holds its deltas (joined) for as long as it is in a history: a fresh string keeps the memory JSON.parse kept.
 */
const SLICE_MAX_CHARS = 12;

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/** Set by skipString: whether the string just skipped had an escape. */
let escaped = false;

function skipSpace(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return i;
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** `s[i]` opens a string: the index after its closing quote, or -1 when it is not a valid JSON string. */
function skipString(s: string, i: number): number {
  let sawEscape = false;
  for (i++; ; i++) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      escaped = sawEscape;
      return i + 1;
    }
    if (c === BACKSLASH) {
      sawEscape = true;
      const e = s.charCodeAt(++i);
      if (e === 117 /* u */) {
        for (let k = 0; k < 4; k++) if (!isHex(s.charCodeAt(++i))) return -1;
      } else if (!(e === QUOTE || e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116)) {
        return -1;
      }
    } else if (!(c >= 32)) {
      return -1; // a raw control character, or the end of the text (NaN)
    }
  }
}

/** `s[i]` starts a number: the index after it, or -1 when it is not a valid JSON number. */
function skipNumber(s: string, i: number): number {
  if (s.charCodeAt(i) === 45 /* - */) i++;
  const first = s.charCodeAt(i);
  if (first === 48) i++;
  else if (first >= 49 && first <= 57) while (isDigit(s.charCodeAt(++i)));
  else return -1;
  if (s.charCodeAt(i) === 46 /* . */) {
    if (!isDigit(s.charCodeAt(++i))) return -1;
    while (isDigit(s.charCodeAt(++i)));
  }
  const e = s.charCodeAt(i);
  if (e === 101 || e === 69) {
    const sign = s.charCodeAt(++i);
    if (sign === 43 || sign === 45) i++;
    if (!isDigit(s.charCodeAt(i))) return -1;
    while (isDigit(s.charCodeAt(++i)));
  }
  return i;
}

/** The index after the literal `word` at `i`, or -1. */
function skipWord(s: string, i: number, word: string): number {
  return s.startsWith(word, i) ? i + word.length : -1;
}

/** `s[i]` starts any JSON value: the index after it, or -1 when it is not valid (or nested deeper than MAX_DEPTH). */
function skipValue(s: string, i: number, depth: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return skipString(s, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    if (depth >= MAX_DEPTH) return -1;
    const close = c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
    i = skipSpace(s, i + 1);
    if (s.charCodeAt(i) === close) return i + 1;
    for (;;) {
      if (c === OPEN_BRACE) {
        if (s.charCodeAt(i) !== QUOTE) return -1;
        i = skipString(s, i);
        if (i < 0) return -1;
        i = skipSpace(s, i);
        if (s.charCodeAt(i) !== COLON) return -1;
        i = skipSpace(s, i + 1);
      }
      i = skipValue(s, i, depth + 1);
      if (i < 0) return -1;
      i = skipSpace(s, i);
      const next = s.charCodeAt(i);
      if (next === close) return i + 1;
      if (next !== COMMA) return -1;
      i = skipSpace(s, i + 1);
    }
  }
  if (c === 116 /* t */) return skipWord(s, i, 'true');
  if (c === 102 /* f */) return skipWord(s, i, 'false');
  if (c === 110 /* n */) return skipWord(s, i, 'null');
  return skipNumber(s, i);
}

/**
 * Walks the members of the object opening at `s[i]`, calling `member(keyStart, keyEnd, valueStart)` for each (the key
 * without its quotes); `member` returns the index after the value, or -1 to give up. Returns the index after the
 * object, or -1. Keys with escapes give up (see the comment at the top).
 */
function eachMember(s: string, i: number, member: (keyStart: number, keyEnd: number, at: number) => number): number {
  if (s.charCodeAt(i) !== OPEN_BRACE) return -1;
  i = skipSpace(s, i + 1);
  if (s.charCodeAt(i) === CLOSE_BRACE) return i + 1;
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) return -1;
    const keyStart = i + 1;
    i = skipString(s, i);
    if (i < 0 || escaped) return -1;
    const keyEnd = i - 1;
    i = skipSpace(s, i);
    if (s.charCodeAt(i) !== COLON) return -1;
    i = member(keyStart, keyEnd, skipSpace(s, i + 1));
    if (i < 0) return -1;
    i = skipSpace(s, i);
    const next = s.charCodeAt(i);
    if (next === CLOSE_BRACE) return i + 1;
    if (next !== COMMA) return -1;
    i = skipSpace(s, i + 1);
  }
}

function keyIs(s: string, start: number, end: number, name: string): boolean {
  return end - start === name.length && s.startsWith(name, start);
}

/** A string value at `i` (or null: undefined): its decoded text and the index after it; index -1 when neither. */
let stringValue: string | undefined;
function readNullableString(s: string, i: number): number {
  if (s.charCodeAt(i) !== QUOTE) {
    stringValue = undefined;
    return skipWord(s, i, 'null');
  }
  const end = skipString(s, i);
  if (end < 0) return -1;
  // An escape, or a long string: decoded by JSON.parse of the literal alone (exact, and a fresh string).
  stringValue = !escaped && end - i - 2 <= SLICE_MAX_CHARS ? s.slice(i + 1, end - 1) : (JSON.parse(s.slice(i, end)) as string);
  return end;
}

/**
 * The fields the collector reads from chunk `text`, or undefined when the text is not the common shape described at
 * the top (then JSON.parse it).
 */
export function scanChatChunk(text: string): ChatChunkFields | undefined {
  const out: ChatChunkFields = { hasChoice: false, hasDelta: false, content: undefined, reasoningContent: undefined, reasoning: undefined, finishReason: undefined, contentStart: -1, contentEnd: -1 };
  // Fields seen, one bit each: a second one gives up.
  let seen = 0;
  const once = (bit: number): boolean => {
    if ((seen & bit) !== 0) return false;
    seen |= bit;
    return true;
  };
  const delta = (keyStart: number, keyEnd: number, at: number): number => {
    if (keyIs(text, keyStart, keyEnd, 'content')) {
      if (!once(1)) return -1;
      const end = readNullableString(text, at);
      out.content = stringValue;
      if (end >= 0 && stringValue !== undefined && !escaped) {
        out.contentStart = at + 1;
        out.contentEnd = end - 1;
      }
      return end;
    }
    if (keyIs(text, keyStart, keyEnd, 'reasoning_content')) {
      if (!once(2)) return -1;
      const end = readNullableString(text, at);
      out.reasoningContent = stringValue;
      return end;
    }
    if (keyIs(text, keyStart, keyEnd, 'reasoning')) {
      if (!once(4)) return -1;
      const end = readNullableString(text, at);
      out.reasoning = stringValue;
      return end;
    }
    // A tool call is assembled by the JSON.parse path (ToolCallDeltas); null is no call.
    if (keyIs(text, keyStart, keyEnd, 'tool_calls') || keyIs(text, keyStart, keyEnd, 'function_call')) return skipWord(text, at, 'null');
    return skipValue(text, at, 3);
  };
  const choice = (keyStart: number, keyEnd: number, at: number): number => {
    if (keyIs(text, keyStart, keyEnd, 'delta')) {
      if (!once(8)) return -1;
      if (text.charCodeAt(at) !== OPEN_BRACE) return skipWord(text, at, 'null');
      out.hasDelta = true;
      return eachMember(text, at, delta);
    }
    if (keyIs(text, keyStart, keyEnd, 'finish_reason')) {
      if (!once(16)) return -1;
      const end = readNullableString(text, at);
      if (end >= 0 && escaped && stringValue !== undefined) return -1;
      out.finishReason = stringValue;
      return end;
    }
    return skipValue(text, at, 2);
  };
  const top = (keyStart: number, keyEnd: number, at: number): number => {
    if (keyIs(text, keyStart, keyEnd, 'choices')) {
      if (!once(32) || text.charCodeAt(at) !== OPEN_BRACKET) return -1;
      let i = skipSpace(text, at + 1);
      if (text.charCodeAt(i) === CLOSE_BRACKET) return i + 1;
      out.hasChoice = true;
      i = skipSpace(text, eachMember(text, i, choice));
      // More than one choice (n > 1): the JSON.parse path looks at all of them.
      return i >= 0 && text.charCodeAt(i) === CLOSE_BRACKET ? i + 1 : -1;
    }
    // An error object, or the usage chunk (with llama-server's timings), take the JSON.parse path.
    if (keyIs(text, keyStart, keyEnd, 'error')) return once(64) ? skipWord(text, at, 'null') : -1;
    if (keyIs(text, keyStart, keyEnd, 'usage')) return once(128) ? skipWord(text, at, 'null') : -1;
    if (keyIs(text, keyStart, keyEnd, 'object')) {
      if (!once(256)) return -1;
      if (text.charCodeAt(at) !== QUOTE) return skipValue(text, at, 1);
      const end = skipString(text, at);
      return escaped || keyIs(text, at + 1, end - 1, 'error') ? -1 : end;
    }
    return skipValue(text, at, 1);
  };
  const end = eachMember(text, skipSpace(text, 0), top);
  return end >= 0 && skipSpace(text, end) === text.length ? out : undefined;
}

/**
 * The shape of a scanned chunk whose content is a string without escapes: its text before and after that string.
 * The chunks of one stream mostly differ in their content alone (same id, created, model, choice and delta keys), so
 * a later chunk that is the same text around a different content, with no quote, backslash or control character in
 * it, is the same JSON with another string: its fields are the shape's, with that content. Matching costs two
 * compares of the text around it and a look at the content, ~10x less than JSON.parse.
 */
export class ChunkShape {
  readonly #before: string;
  readonly #after: string;
  /** The scanned chunk's fields; `content` is replaced by each match's. */
  readonly fields: ChatChunkFields;

  /** The shape of `text`, scanned as `fields`; undefined when its content is not a string without escapes. */
  static of(text: string, fields: ChatChunkFields): ChunkShape | undefined {
    return fields.contentStart < 0 ? undefined : new ChunkShape(text.slice(0, fields.contentStart), text.slice(fields.contentEnd), fields);
  }

  private constructor(before: string, after: string, fields: ChatChunkFields) {
    this.#before = before;
    this.#after = after;
    this.fields = fields;
  }

  /** The content of `text` when it is this shape around a plain string (see the class comment), else undefined. */
  contentOf(text: string): string | undefined {
    const start = this.#before.length;
    const end = text.length - this.#after.length;
    // slice + === rather than startsWith/endsWith: measured 4-5x cheaper on Node 20 for texts of this size.
    if (end < start || text.slice(0, start) !== this.#before || text.slice(end) !== this.#after) return undefined;
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE || c === BACKSLASH || c < 32) return undefined;
    }
    return end - start <= SLICE_MAX_CHARS ? text.slice(start, end) : (JSON.parse(text.slice(start - 1, end + 1)) as string);
  }
}
