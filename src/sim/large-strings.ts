import { letLoopGo, PartsText } from '../tokenizer/index.js';
import type { LargeString } from './json-worker.js';

/*
 * A parsed body's large strings put back in place (issue #14): the JSON worker sends each string over
 * LARGE_STRING_CHARS as UTF-8 bytes (json-worker.ts), and the loop decodes them here, at most PIECE_BYTES at a time
 * with the loop let go between. A string longer than one piece, where the request's reader takes parts (a chat
 * message's content: `PiecesAt`), stays as its pieces, a PartsText that the prompt's rendering and the tokenizer read
 * without ever joining it; anywhere else its pieces are joined into one string (one copy of its length).
 */

/**
 * Bytes of a non-ASCII string decoded per slice of work: UTF-8 with multi-byte characters decodes at ~3 ms per MB
 * (a 3.9 MB content: 12 ms in one piece), so ~0.8 ms.
 */
export const PIECE_BYTES = 256 * 1024;

/**
 * Bytes of an ASCII string decoded per slice of work: ~0.75 ms per MB (a 3 MB content: 2.3 ms, against the clone's
 * 3-5 ms). Not 256 kB: decoded in pieces of 256 kB (or 1 MB), a 3 MB content made the simulator run 2-7
 * mark-compacts per ten such requests instead of one (the same when the pieces were joined), whose pauses at a load
 * of 5-15 (10-80 ms, waiting for the collector's helper threads) were the longest stalls.
 */
export const ASCII_PIECE_BYTES = 4 * 1024 * 1024;

/** Whether the large string at `path` may come as a PartsText (its reader takes one there) rather than a string. */
export type PiecesAt = (path: readonly (string | number)[]) => boolean;

/** Anywhere: a string. */
const NOWHERE: PiecesAt = () => false;

/** Where a piece may end at or before `end` (within (start, end]): never inside a UTF-8 sequence. */
function pieceEnd(utf8: Uint8Array, start: number, end: number): number {
  if (end >= utf8.length) return utf8.length;
  // A continuation byte (10xxxxxx) is inside a character: step back to its lead byte, the next piece's first.
  let at = end;
  while (at > start + 1 && (utf8[at]! & 0xc0) === 0x80) at--;
  return at;
}

/**
 * Decodes `strings` in order, each as its pieces of at most `sizes.ascii` bytes (an ASCII string) or `sizes.other`,
 * cut between characters (a 4-byte character, a surrogate pair in UTF-16, is never split), letting the loop go before
 * a piece once a piece's worth has been decoded since it last went (short strings share a turn); `done` gets each
 * string's pieces.
 */
async function decodeAll(strings: readonly LargeString[], sizes: PieceSizes, done: (s: LargeString, pieces: string[]) => void): Promise<void> {
  let sinceTurn = 0;
  for (const s of strings) {
    const { utf8 } = s;
    const pieceBytes = utf8.length === s.chars ? sizes.ascii : sizes.other;
    const view = Buffer.from(utf8.buffer, utf8.byteOffset, utf8.byteLength);
    const pieces: string[] = [];
    for (let start = 0; start < utf8.length; ) {
      if (sinceTurn >= pieceBytes) {
        sinceTurn = 0;
        await letLoopGo();
      }
      const end = pieceEnd(utf8, start, start + pieceBytes);
      pieces.push(view.toString('utf8', start, end));
      sinceTurn += end - start;
      start = end;
    }
    done(s, pieces);
  }
  // Once more after the last piece: the request's validation, rendering and first tokenizer slice run next, and
  // shared a gap with a 3 MB piece's decoding (~2 ms) in the probe.
  if (sinceTurn > 0) await letLoopGo();
}

/** Bytes per piece: of an ASCII string, of any other. At least 4 (a character's longest UTF-8 form). */
export interface PieceSizes {
  ascii: number;
  other: number;
}

const PIECE_SIZES: PieceSizes = { ascii: ASCII_PIECE_BYTES, other: PIECE_BYTES };

/**
 * `value` with each of `strings` put back at its path: a PartsText of its pieces where `piecesAt` says its reader
 * takes one (and it has more than one piece), a string elsewhere. Returns the value (a new one when it is the string).
 * `sizes`: for tests.
 */
export async function placeLargeStrings(value: unknown, strings: readonly LargeString[], piecesAt: PiecesAt = NOWHERE, sizes = PIECE_SIZES): Promise<unknown> {
  let root = value;
  await decodeAll(strings, sizes, (s, pieces) => {
    const text = pieces.length > 1 && piecesAt(s.path) ? new PartsText(pieces) : pieces.join('');
    if (s.path.length === 0) {
      root = text;
      return;
    }
    let holder = root as Record<string | number, unknown>;
    for (let i = 0; i < s.path.length - 1; i++) holder = holder[s.path[i]!] as Record<string | number, unknown>;
    // Defined, not assigned: a key named __proto__ is the object's own property, as JSON.parse made it.
    Object.defineProperty(holder, s.path[s.path.length - 1]!, { value: text, writable: true, enumerable: true, configurable: true });
  });
  return root;
}
