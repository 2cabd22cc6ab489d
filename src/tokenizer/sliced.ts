import { IdSink, idsFor } from './id-sink.js';
import { letLoopGo } from '../util/loop-turns.js';
import { PartsText } from './parts-text.js';
import type { Tokenizer } from './types.js';

/*
 * Counting and encoding large texts without holding the event loop (issue #14): the text is cut into slices before a
 * whitespace run and each slice is tokenized on its own, with the loop let go between slices. Slices are sized to
 * take about SLICE_TARGET_MS whatever the tokenizer's speed, so other sessions' timers and sockets wait at most that
 * long, even for a 10 MB message.
 *
 * A cut falls where a whitespace character follows a non-whitespace one. The approximate tokenizer's pieces (and those
 * of BPE tokenizers whose pre-tokenizer splits before whitespace, as GPT-2's and tiktoken's do) never span such a
 * point, so the sum of the slices equals the whole. A text with no whitespace for 4,096 characters is cut anyway,
 * which can shift a count by a token per cut.
 *
 * A text may be given as its parts (PartsText: a message's template markup and its content, never concatenated): the
 * cuts are those of the whole text, and a slice is read from the parts it overlaps, so the ids are those of the
 * concatenation without it ever being built.
 */

/** Characters in the first slice; later ones are sized from its time. */
const FIRST_SLICE_CHARS = 16 * 1024;
const SLICE_TARGET_MS = 0.5;
const MAX_SLICE_CHARS = 1024 * 1024;
/** Texts up to this long are tokenized in one go (well under a millisecond). */
export const SYNC_CHARS = 32 * 1024;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

/** How far a cut is looked for before cutting anyway. */
const CUT_SEARCH_CHARS = 4096;

/** Where a slice may end at or after `from` (> 0): a whitespace character after a non-whitespace one. */
function cutAt(text: PartsText, from: number): number {
  // Read through a small slice: the parts are never indexed one character at a time.
  const near = text.slice(from - 1, from + CUT_SEARCH_CHARS);
  for (let i = 1; i < near.length; i++) {
    if (isSpace(near.charCodeAt(i)) && !isSpace(near.charCodeAt(i - 1))) return from + i - 1;
  }
  // The text ends within the search with no boundary (a piece ending in `word<|im_end|>`): no cut, one last slice. A
  // cut there shifted ids, since a piece is often followed by a marker with no space before it.
  if (from - 1 + near.length >= text.length) return text.length;
  // No word boundary nearby (e.g. base64): cut anyway, outside a surrogate pair.
  const c = near.charCodeAt(0);
  return c >= 0xd800 && c <= 0xdbff ? from + 1 : from;
}

/** Calls `work` on consecutive slices of `text`, yielding to the event loop between them. */
async function eachSlice(text: PartsText, work: (slice: string) => void): Promise<void> {
  let size = FIRST_SLICE_CHARS;
  for (let start = 0; start < text.length; ) {
    const end = start + size >= text.length ? text.length : cutAt(text, start + size);
    const t0 = performance.now();
    work(text.slice(start, end));
    const ms = performance.now() - t0;
    const scaled = ms > 0 ? Math.floor(((end - start) * SLICE_TARGET_MS) / ms) : size * 2;
    size = Math.max(4096, Math.min(MAX_SLICE_CHARS, scaled, size * 4));
    start = end;
    if (start < text.length) await letLoopGo();
  }
}

function asParts(text: string | PartsText): PartsText {
  return typeof text === 'string' ? new PartsText([text]) : text;
}

/** The token count of `text`, counted in slices that let the event loop go (see above). */
export async function countTextYielding(tokenizer: Tokenizer, text: string | PartsText): Promise<number> {
  if (text.length <= SYNC_CHARS) return tokenizer.count(text.slice(0));
  let total = 0;
  await eachSlice(asParts(text), (slice) => {
    total += tokenizer.count(slice);
  });
  return total;
}

/**
 * The token ids of `text` in a Uint32Array, encoded in slices that let the event loop go (see above), into one array
 * whose room is made at once (idsFor: it grows past that if need be): see IdSink. The caller owns the array.
 */
export async function encodeIdsYielding(tokenizer: Tokenizer, text: string | PartsText): Promise<Uint32Array> {
  // A short text too goes through an IdSink (at once): no array of ids in between (an answer's ids, once a request:
  // issue 17).
  const sink = new IdSink(idsFor(text.length));
  const encoding = encodeTextInto(tokenizer, text, sink);
  if (encoding !== undefined) await encoding;
  return sink.ids.subarray(0, sink.length);
}

/**
 * Encodes `text` in the same slices, pushing each slice's ids into `sink` as it is made (nothing held in one piece).
 * A text of up to SYNC_CHARS is encoded at once and undefined returned: no promise, no turn of the microtask queue
 * (a prompt's few short pieces per turn, issue 17); a longer one returns a promise of its end.
 */
export function encodeTextInto(tokenizer: Tokenizer, text: string | PartsText, sink: IdSink): Promise<void> | undefined {
  const encodeSlice = (slice: string): void => {
    if (tokenizer.encodeTo !== undefined) tokenizer.encodeTo(slice, sink);
    else sink.pushAll(tokenizer.encode(slice));
  };
  if (text.length <= SYNC_CHARS) {
    encodeSlice(text.slice(0));
    return undefined;
  }
  return eachSlice(asParts(text), encodeSlice);
}
