import type { ChatMessage, IncrementalRendering, TokenCounter, Tokenizer } from '../tokenizer/index.js';
import { IdSink, idsFor } from '../tokenizer/id-sink.js';
import { PartsText } from '../tokenizer/parts-text.js';
import { letLoopGo } from '../util/loop-turns.js';
import { encodeTextInto, SYNC_CHARS } from '../tokenizer/sliced.js';

/*
 * A conversation's prompt token ids as the chat template renders them and the tokenizer encodes them, kept from
 * turn to turn so that each turn encodes only its new text (issue #13). Only what follows the last "restart marker"
 * both prompts share is encoded again.
 *
 * How the shared part is found depends on the template. A template that renders message by message (ChatML: it
 * declares `incremental`) is rendered per message: the leading messages that are the very same objects as last turn
 * (history is append-only and never edited in place; a fork or a self-contained turn shares fewer or none) keep
 * their rendered text, offsets and ids, and only the new messages are rendered and encoded, from the last marker
 * before them. No string of the whole history is built or compared: per turn, a pointer compare per message, then
 * work linear in the new text. Any other template (a model's Jinja template, which may render a message depending on
 * later ones, e.g. dropping old reasoning) is rendered whole each turn and compared with the previous prompt (native
 * string compares): exact, its render and compare linear in the history, its encode in the new text only.
 *
 * A restart marker is a special token of the template (`<|im_start|>`, `<|im_end|>`, `<s>`...) after which the
 * tokenizer starts afresh: encode(P + s + Q) = encode(P + s) ++ encode(s + Q) without its first id, for any P and
 * Q. That holds for added tokens of Hugging Face tokenizers, tiktoken's specials and the approximate tokenizer's
 * `<|name|>`; each candidate is checked on probes before use. A template with no such marker (say ChatML markup
 * under Llama-2's tokenizer, where `<|im_start|>` is plain text) is encoded whole every turn: exact, not linear.
 *
 * A message's rendering is kept as its parts (template markup, its content as it is: IncrementalRendering.renderParts)
 * and read through PartsText, never concatenated: V8 copies a concatenation into one flat string the first time it is
 * read, 3-8 ms in one piece for a 10 MB message (issue #14). The ids are those of the concatenation all the same: the
 * marker search and the tokenizer's slices read the text across part boundaries (tokenizer/parts-text.ts).
 */

/** Characters of a long text searched for a restart marker between yields to the event loop. */
const MARKER_WINDOW_CHARS = 1024 * 1024;
/** Characters of the first window a marker is searched in (then 4 times more each time, up to MARKER_WINDOW_CHARS). */
const FIRST_WINDOW_CHARS = 4096;
/** Longest restart marker: CANDIDATE's `<|name|>` with a 64-character name is 68. */
const MARKER_MAX_CHARS = 68;

/** Texts around a candidate marker that the restart property is checked on. */
const PROBE_BEFORE = ['', 'a', 'Hello.', 'x  ', 'end\n', 'é!', '12'];
const PROBE_AFTER = ['', 'b', ' hi', '\nuser\nHello there', '  x', '.', '\n\n'];

/** Appends `more` to `parts` (an index loop: no spread, whose compiled code V8 specializes by count; see updateMessages). */
function pushAll(parts: string[], more: readonly string[]): void {
  for (let i = 0; i < more.length; i++) parts.push(more[i]!);
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Whether the tokenizer restarts after `marker` (see the comment at the top), checked on probe texts. */
function restartsAfter(tokenizer: Tokenizer, marker: string): boolean {
  const id = tokenizer.encode(marker);
  if (id.length !== 1) return false;
  for (const before of PROBE_BEFORE) {
    const head = tokenizer.encode(before + marker);
    if (head[head.length - 1] !== id[0]) return false;
    for (const after of PROBE_AFTER) {
      const tail = tokenizer.encode(marker + after);
      if (tail[0] !== id[0]) return false;
      if (!sameIds(tokenizer.encode(before + marker + after), [...head, ...tail.slice(1)])) return false;
    }
  }
  return true;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Candidate special tokens in rendered template text: `<|name|>`, `<name>` / `</name>`, `[INST]`-style tags. */
const CANDIDATE = /<\|[^<>|\s]{1,64}\|>|<\/?[A-Za-z_][A-Za-z0-9_]{0,31}>|\[\/?[A-Z_]{2,16}\]/g;

/**
 * The restart markers of a tokenizer and template, as one regex matching any of them, or null when there are none.
 * Found by rendering a probe conversation and keeping the candidate tokens that pass `restartsAfter`.
 */
export function restartMarkers(counter: TokenCounter): RegExp | null {
  const probes: ChatMessage[][] = [
    [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
      { role: 'assistant', content: 'A' },
      { role: 'user', content: 'V' },
    ],
    [
      { role: 'user', content: 'U' },
      { role: 'assistant', content: 'A' },
      { role: 'user', content: 'V' },
    ],
  ];
  const candidates = new Set<string>();
  for (const messages of probes) {
    try {
      for (const m of counter.template.apply(messages, { addGenerationPrompt: true }).matchAll(CANDIDATE)) candidates.add(m[0]);
    } catch {
      // A template that rejects a probe (no system role, say): the other probe is enough.
    }
  }
  const markers = [...candidates].filter((m) => restartsAfter(counter.tokenizer, m)).sort((a, b) => b.length - a.length);
  return markers.length === 0 ? null : new RegExp(markers.map(escapeRegex).join('|'), 'g');
}

/** Length of the common prefix of two strings, in UTF-16 code units. Native compares, log-many of them. */
export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  if (b.startsWith(a.length <= n ? a : a.slice(0, n))) return n;
  let lo = 0;
  let hi = n; // a[0, lo) == b[0, lo), and a[0, hi) != b[0, hi)
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (b.startsWith(a.slice(0, mid))) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** A restart marker found in a text: where it starts and ends. */
interface Marker {
  index: number;
  end: number;
}

/** The ids of the latest prompt and how many of its leading ids the previous prompt shared. */
export interface PromptIdsUpdate {
  /** Token ids; only `[0, length)` is meaningful. */
  ids: Uint32Array;
  length: number;
  /** Leading ids unchanged since the previous update (already hashed). */
  unchanged: number;
}

/** One conversation's prompt ids, updated turn by turn (see the comment at the top). */
export class PromptIds {
  readonly #tokenizer: Tokenizer;
  readonly #markers: RegExp | null;
  #text = '';
  readonly #ids = new IdSink();
  /** For each marker occurrence: its start in the text, its end, and the ids up to and including it. */
  #markStart: number[] = [];
  #markEnd: number[] = [];
  #markIds: number[] = [];

  /** The incremental path (updateMessages): the messages last rendered, their renderings' parts and start offsets. */
  #messages: ChatMessage[] = [];
  #rendered: Array<readonly string[]> = [];
  #offsets: number[] = [0];

  constructor(tokenizer: Tokenizer, markers: RegExp | null) {
    this.#tokenizer = tokenizer;
    // Its own copy: a global regex keeps its place in lastIndex, and other conversations encode between our awaits.
    this.#markers = markers === null ? null : new RegExp(markers.source, markers.flags);
  }

  /**
   * Brings the ids to `messages` rendered by a message-by-message template, with its generation prompt: renders and
   * encodes only the messages that are not the same objects as last time (see the comment at the top).
   */
  async updateMessages(messages: readonly ChatMessage[], rendering: IncrementalRendering): Promise<PromptIdsUpdate> {
    let shared = 0;
    const old = this.#messages;
    while (shared < messages.length && shared < old.length && messages[shared] === old[shared]) shared++;
    const sharedEnd = this.#offsets[shared]!;
    old.length = this.#rendered.length = shared;
    this.#offsets.length = shared + 1;
    const tail: string[] = [];
    for (let i = shared; i < messages.length; i++) {
      const parts = rendering.renderParts(messages[i]!);
      old.push(messages[i]!);
      this.#rendered.push(parts);
      let length = 0;
      // One push per part, not push(...parts): V8's optimized code for a spread push assumed the parts' count it had
      // seen and was thrown away and compiled again at the first message with another count (~10% of the model's
      // optimizing-compiler work in a 1,000-turn run, by --turbo-stats' zone bytes).
      for (let k = 0; k < parts.length; k++) {
        length += parts[k]!.length;
        tail.push(parts[k]!);
      }
      this.#offsets.push(this.#offsets[i]! + length);
    }
    tail.push(rendering.generationPrompt);
    this.#text = ''; // the whole-text path's state is not kept here; a later update(text) starts afresh
    let j = this.#markEnd.length - 1;
    while (j >= 0 && this.#markEnd[j]! > sharedEnd) j--;
    if (j < 0 || this.#markers === null) {
      // Nothing reusable (a new or reset conversation, or no restart marker): the whole prompt, encoded whole.
      const parts: string[] = [];
      for (let k = 0; k < shared; k++) pushAll(parts, this.#rendered[k]!);
      pushAll(parts, tail);
      const whole = new PartsText(parts);
      this.#markStart.length = this.#markEnd.length = this.#markIds.length = 0;
      this.#ids.length = 0;
      await this.#encodeFrom(whole, 0, 0, false);
      return { ids: this.#ids.ids, length: this.#ids.length, unchanged: 0 };
    }
    // Re-encode from marker j: the rest of the message holding it (and any after it up to the shared end), then the new text.
    const start = this.#markStart[j]!;
    const i = this.#messageAt(start, shared);
    const parts: string[] = [];
    pushAll(parts, new PartsText(this.#rendered[i]!).sub(start - this.#offsets[i]!).parts);
    for (let k = i + 1; k < shared; k++) pushAll(parts, this.#rendered[k]!);
    pushAll(parts, tail);
    const text = new PartsText(parts);
    const unchanged = this.#markIds[j]!;
    this.#ids.length = unchanged;
    this.#markStart.length = this.#markEnd.length = this.#markIds.length = j;
    await this.#encodeFrom(text, start, 0, true);
    return { ids: this.#ids.ids, length: this.#ids.length, unchanged };
  }

  /** The index of the shared message whose rendered text holds offset `at` (binary search; `at` < the shared end). */
  #messageAt(at: number, shared: number): number {
    let lo = 0;
    let hi = shared - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.#offsets[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Brings the ids to `text`, the new prompt as rendered, encoding only what follows the last shared marker. */
  async update(text: string): Promise<PromptIdsUpdate> {
    this.#messages.length = this.#rendered.length = 0; // the incremental path's state is not kept here
    this.#offsets.length = 1;
    const common = commonPrefixLength(this.#text, text);
    let j = this.#markEnd.length - 1;
    while (j >= 0 && this.#markEnd[j]! > common) j--;
    let unchanged = 0;
    if (j < 0 || this.#markers === null) {
      this.#markStart.length = this.#markEnd.length = this.#markIds.length = 0;
      this.#ids.length = 0;
      await this.#encodeFrom(new PartsText([text]), 0, 0, false);
    } else {
      const start = this.#markStart[j]!;
      unchanged = this.#markIds[j]!;
      this.#ids.length = unchanged;
      this.#markStart.length = this.#markEnd.length = this.#markIds.length = j;
      await this.#encodeFrom(new PartsText([text]), 0, start, true);
    }
    this.#text = text;
    return { ids: this.#ids.ids, length: this.#ids.length, unchanged };
  }

  /**
   * Encodes text[from..] piece by piece between markers; `atMarker`: text[from] starts a marker already counted.
   * `base`: the offset of `text` in the whole prompt (marker positions are recorded in whole-prompt offsets).
   */
  async #encodeFrom(whole: PartsText, base: number, from: number, atMarker: boolean): Promise<void> {
    // A short text (a turn's new messages) is read as one string: built once, where every marker search and every
    // piece between markers read across its parts again, each a new concatenation that the regex or the tokenizer
    // then copied flat (issue 17). A long one stays in parts (issue #14: never concatenated).
    const text = whole.length <= SYNC_CHARS && whole.parts.length > 1 ? new PartsText([whole.slice(0)]) : whole;
    const markers = this.#markers;
    if (markers === null) {
      const pushed = this.#pushText(text, 0);
      if (pushed !== undefined) await pushed;
      return;
    }
    let pieceStart = from;
    let dropFirst = atMarker;
    let searchFrom = from;
    if (atMarker) {
      // The marker at `from` is counted already: the next piece starts with it, so skip past it in the search.
      markers.lastIndex = 0;
      const m = markers.exec(text.slice(from, from + MARKER_MAX_CHARS));
      if (m === null || m.index !== 0) throw new Error('PromptIds: the restart marker moved');
      searchFrom = from + m[0].length;
      this.#recordMark(base + from, base + searchFrom);
    }
    // The searches and encodes below return a promise only when they had to let the loop go (a long text): awaited
    // then only, so a short text's pieces cost no promise and no microtask each (issue 17).
    let next = this.#nextMarker(text, searchFrom);
    for (let m = next instanceof Promise ? await next : next; m !== null; m = next instanceof Promise ? await next : next) {
      const pushed = this.#pushText(text.sub(pieceStart, m.end), dropFirst ? 1 : 0);
      if (pushed !== undefined) await pushed;
      this.#recordMark(base + m.index, base + m.end);
      pieceStart = m.index;
      dropFirst = true;
      next = this.#nextMarker(text, m.end);
    }
    if (pieceStart < text.length) {
      const pushed = this.#pushText(text.sub(pieceStart), dropFirst ? 1 : 0);
      if (pushed !== undefined) await pushed;
    }
  }

  /**
   * The first restart marker in `text` at or after `from`. The text is searched in windows, the first FIRST_WINDOW_CHARS
   * long and each next one 4 times longer up to MARKER_WINDOW_CHARS, with the loop let go after each MARKER_WINDOW_CHARS
   * searched: one search through a 10 MB message with no marker in it took ~3 ms (issue #14). A window is read from the
   * parts it overlaps: within one part it is a view, across parts a copy, short while markers come often. A match is
   * taken only when it starts inside its window, so that the window holds all of it (markers are at most
   * MARKER_MAX_CHARS long) and it is the same match as a search of the whole text finds. Found within the first
   * MARKER_WINDOW_CHARS searched (always, in a short text), it is returned at once; else a promise of it.
   */
  #nextMarker(text: PartsText, from: number): Marker | null | Promise<Marker | null> {
    const found = this.#searchMarker(text, from, FIRST_WINDOW_CHARS);
    return typeof found === 'number' ? this.#nextMarkerLater(text, found) : found;
  }

  /** The search of #nextMarker on from `from`, the loop let go before each MARKER_WINDOW_CHARS searched. */
  async #nextMarkerLater(text: PartsText, from: number): Promise<Marker | null> {
    for (let found: Marker | null | number = from; ; ) {
      await letLoopGo();
      found = this.#searchMarker(text, found, MARKER_WINDOW_CHARS);
      if (typeof found !== 'number') return found;
    }
  }

  /**
   * Searches `text` from `from` in windows (the first `size` long) for up to MARKER_WINDOW_CHARS characters: the first
   * marker, null when the text has none after `from`, or where to search on from when it searched that far.
   */
  #searchMarker(text: PartsText, from: number, size: number): Marker | null | number {
    const markers = this.#markers!;
    let searched = 0;
    for (let start = from; ; start += size, size = Math.min(size * 4, MARKER_WINDOW_CHARS)) {
      const whole = text.length - start <= size + MARKER_MAX_CHARS;
      markers.lastIndex = 0;
      const m = markers.exec(text.slice(start, whole ? text.length : start + size + MARKER_MAX_CHARS));
      if (m !== null && (whole || m.index < size)) return { index: start + m.index, end: start + m.index + m[0].length };
      if (whole) return null;
      searched += size;
      if (searched >= MARKER_WINDOW_CHARS) return start + size;
    }
  }

  /**
   * Encodes `text` and appends its ids from `skip` on; a large text in slices that let the event loop go (issue #14),
   * then a promise of its end is returned (a short one is encoded at once: undefined).
   */
  #pushText(text: PartsText, skip: number): Promise<void> | undefined {
    // A large text's room is made before it is encoded, while the ids held are few: growing a 2.5M-id array once it
    // is full copies it in one piece (~6 ms at 10 MB). Its size is a guess (idsFor; sizes stay correct past it).
    if (text.length > SYNC_CHARS) this.#ids.reserve(this.#ids.length + idsFor(text.length));
    this.#ids.skipNext(skip);
    const encoding = encodeTextInto(this.#tokenizer, text, this.#ids);
    if (encoding === undefined) {
      this.#ids.skipNext(0);
      return undefined;
    }
    return encoding.then(() => this.#ids.skipNext(0));
  }

  #recordMark(start: number, end: number): void {
    this.#markStart.push(start);
    this.#markEnd.push(end);
    this.#markIds.push(this.#ids.length);
  }
}
