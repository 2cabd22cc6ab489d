import type { IdSink } from './id-sink.js';
import type { Tokenizer } from './types.js';

/*
 * The approximate tokenizer, used until a real one is configured (the datasets issue adds Hugging Face and
 * OpenAI encodings). It is hand-written on purpose: it must be deterministic, dependency-free and fast, because
 * the simulator runs it on every prompt.
 *
 * Rule: special tokens `<|name|>` are one token each. Other text is split with GPT-2's pre-tokenizer regex
 * (contractions, an optional space plus letters, an optional space plus digits, an optional space plus
 * punctuation, whitespace runs), then each piece is cut into chunks of at most 4 UTF-16 code units
 * (never inside a surrogate pair). English prose comes out near 1 token per 4 characters, within about ±25% of
 * a BPE tokenizer such as cl100k_base. Ids are the 32-bit FNV-1a hash of each chunk, so equal text gives equal
 * ids and the simulator's prefix cache sees real prefix sharing.
 */

const SPECIAL = /<\|[A-Za-z0-9_]+\|>/y;
const PIECE = /'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/uy;
const CHUNK = 4;

/** 32-bit FNV-1a over UTF-16 code units of `text` from `start` to `end`. */
function fnv1a(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Character classes of ASCII for PIECE's alternatives: a letter, a digit, whitespace (`\s`), anything else. */
const LETTER = 0;
const DIGIT = 1;
const SPACE = 2;
const OTHER = 3;
const ASCII_CLASS = new Uint8Array(128).fill(OTHER);
for (let c = 65; c <= 90; c++) ASCII_CLASS[c] = ASCII_CLASS[c + 32] = LETTER;
for (let c = 48; c <= 57; c++) ASCII_CLASS[c] = DIGIT;
for (const c of [9, 10, 11, 12, 13, 32]) ASCII_CLASS[c] = SPACE;
/** asciiPieceEnd's answer when a character it must decide on is not ASCII: ask the regex. */
const NOT_ASCII = -1;

/**
 * Where PIECE's match at `pos` ends, found by hand: PIECE's alternatives in their order, over ASCII. Hand-written
 * because the regex was most of the tokenizer's cost and ASCII is most of what it reads (prompts, code, JSON): with
 * this path a token costs 0.42-0.60x as much to count and 0.70-0.83x to encode (bench/approx-tokenizer.ts). Returns
 * NOT_ASCII when a character that decides the match is not ASCII (a Unicode letter, digit or space could extend or
 * end the piece), and the regex decides. test/tokenizer/approx-scan.test.ts checks the ids against the regex's scan on
 * random texts.
 */
function asciiPieceEnd(text: string, pos: number): number {
  const len = text.length;
  const c = text.charCodeAt(pos);
  if (c >= 128) return NOT_ASCII;
  // '(?:[sdmt]|ll|ve|re)
  if (c === 39 && pos + 1 < len) {
    const d = text.charCodeAt(pos + 1);
    if (d === 115 || d === 100 || d === 109 || d === 116) return pos + 2;
    if (pos + 2 < len) {
      const e = text.charCodeAt(pos + 2);
      if ((d === 108 && e === 108) || (d === 118 && e === 101) || (d === 114 && e === 101)) return pos + 3;
    }
  }
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: a run of one class, after an optional space.
  let kind = ASCII_CLASS[c]!;
  let run = pos;
  if (c === 32 && pos + 1 < len) {
    const d = text.charCodeAt(pos + 1);
    if (d >= 128) return NOT_ASCII;
    if (ASCII_CLASS[d] !== SPACE) {
      kind = ASCII_CLASS[d]!;
      run = pos + 1;
    }
  }
  let end = run + 1;
  for (; end < len; end++) {
    const x = text.charCodeAt(end);
    if (x >= 128) return NOT_ASCII;
    if (ASCII_CLASS[x] !== kind) break;
  }
  if (kind !== SPACE || end === len) return end;
  // `\s+(?!\S)` gives a run before a non-space back its last space; `\s+` takes a lone one.
  return end - pos >= 2 ? end - 1 : end;
}

/** Where PIECE's match at `pos` ends (pos + 1 at least). */
function matchEnd(text: string, pos: number): number {
  const end = asciiPieceEnd(text, pos);
  if (end !== NOT_ASCII) return end;
  PIECE.lastIndex = pos;
  // test, not exec: only where the piece ends is needed, and test builds no match array (a third of the cost).
  // The regex alternatives cover every character, so a match always advances; guard anyway.
  return PIECE.test(text) && PIECE.lastIndex > pos ? PIECE.lastIndex : pos + 1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Scans `text` into token ids: pushed onto `ids` or into `sink` (or neither, to count them), each new id's text kept in
 * `chunks` when given. Returns the number of tokens. No callback per token: its one call site, shared by the four
 * callers' closures, was deoptimized in a run each time another caller came (V8's "wrong feedback cell", issue 17).
 */
function scan(text: string, ids: number[] | null, sink: IdSink | null, chunks: Map<number, string> | null): number {
  let n = 0;
  let pos = 0;
  const counting = ids === null && sink === null && chunks === null;
  // The next `<|` at or after pos + 1, found again only once passed: one indexOf per piece made a text without
  // special tokens quadratic (a 2,000,000-token message took minutes to generate; issue #16).
  let special = -1;
  while (pos < text.length) {
    if (text.charCodeAt(pos) === 60 /* < */) {
      SPECIAL.lastIndex = pos;
      if (SPECIAL.test(text)) {
        n += emit(text, pos, SPECIAL.lastIndex, ids, sink, chunks);
        pos = SPECIAL.lastIndex;
        continue;
      }
    }
    const end = matchEnd(text, pos);
    // A special token may start inside a punctuation piece: stop the piece there.
    if (special !== Infinity && special < pos + 1) {
      special = text.indexOf('<|', pos + 1);
      if (special === -1) special = Infinity;
    }
    const pieceEnd = special < end ? special : end;
    let start = pos;
    while (start < pieceEnd) {
      let stop = Math.min(start + CHUNK, pieceEnd);
      if (stop < pieceEnd && isHighSurrogate(text.charCodeAt(stop - 1))) stop -= 1;
      if (stop === start) stop = start + 2;
      // Counting needs no id: the hash is most of a short token's cost. Decided once a scan: the same test inside
      // emit() measured 5-9% slower per token counted (bench/approx-tokenizer.ts --baseline).
      n += counting ? 1 : emit(text, start, stop, ids, sink, chunks);
      start = stop;
    }
    pos = pieceEnd;
  }
  return n;
}

/** Emits the token text[start, end) where scan sends it (see scan); returns 1. */
function emit(text: string, start: number, end: number, ids: number[] | null, sink: IdSink | null, chunks: Map<number, string> | null): number {
  const id = fnv1a(text, start, end);
  if (ids !== null) ids.push(id);
  else if (sink !== null) sink.push(id);
  if (chunks !== null && !chunks.has(id)) chunks.set(id, text.slice(start, end));
  return 1;
}

/** The approximate tokenizer (see the comment above for the rule). */
export class ApproxTokenizer implements Tokenizer {
  readonly name = 'approx';
  readonly exact = false;

  encode(text: string): number[] {
    const ids: number[] = [];
    scan(text, ids, null, null);
    return ids;
  }

  encodeTo(text: string, sink: IdSink): void {
    scan(text, null, sink, null);
  }

  count(text: string): number {
    return scan(text, null, null, null);
  }
}

/** The shared instance: the tokenizer is stateless. */
export const approxTokenizer = new ApproxTokenizer();

/**
 * The approximate tokenizer that can also decode: it remembers the text of every chunk it has encoded, so the
 * generator can slice a token stream of the approximate tokenizer like that of a real one. Counts and ids are those
 * of ApproxTokenizer. Memory grows with the distinct chunks of the text it saw (a corpus: a few tens of thousands).
 */
export class DecodingApproxTokenizer extends ApproxTokenizer {
  readonly #chunks = new Map<number, string>();

  override encode(text: string): number[] {
    const ids: number[] = [];
    scan(text, ids, null, this.#chunks);
    return ids;
  }

  /** Every chunk is remembered. */
  override encodeTo(text: string, sink: IdSink): void {
    scan(text, null, sink, this.#chunks);
  }

  /** The text of ids this instance encoded before (unknown ids decode to nothing). */
  decode(ids: readonly number[]): string {
    let out = '';
    for (const id of ids) out += this.#chunks.get(id) ?? '';
    return out;
  }
}
