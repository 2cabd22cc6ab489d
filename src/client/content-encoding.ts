import { PassThrough, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** A response body to read: decoded when the server compressed it, with the arrival time of what it holds. */
export interface DecodedBody {
  body: Readable;
  /**
   * The arrival time (ms, `performance.now()`) of the network read that the bytes now being emitted came from.
   * Undefined for an identity body: its reader stamps each read itself, as it arrives.
   */
  arrivalMs?: () => number;
  /** The codings undone, e.g. `gzip` (empty for an identity body). */
  encoding: string;
}

/** The content codings chatload can undo (Node's zlib): gzip, deflate and br. */
const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * An error while undoing a content coding; its `cause` is zlib's error, whose code Z_BUF_ERROR means the compressed
 * data ended early. Matched by `name` in classify-error.ts.
 */
export class ContentDecodingError extends Error {
  constructor(encoding: string, cause: unknown) {
    super(`${encoding}-encoded body could not be decoded: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'ContentDecodingError';
  }
}

/**
 * The body to read for a response with this `Content-Encoding`. chatload asks for `identity`, but a server may
 * compress anyway (issue #16: a gzip SSE body was read as garbage and reported as truncated_stream). gzip, deflate
 * and br are decoded as they stream, each decoded piece stamped with the arrival of the read it came from; any
 * other coding gives `{ unsupported }` naming it. A decoding error names the coding.
 */
export function decodeContent(raw: Readable, contentEncoding: string): DecodedBody | { unsupported: string } {
  const codings = contentEncoding
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return { body: raw, encoding: '' };
  const unknown = codings.find((c) => DECODERS[c] === undefined);
  if (unknown !== undefined) return { unsupported: unknown };
  const encoding = codings.join(', ');
  // Codings apply in the order listed, so they are undone from the last.
  const chain = codings.reverse().map((c) => DECODERS[c]!());
  // The reader gets `out`, never a decoder: a decoder's error reaches it as one that names the coding.
  const out = new PassThrough();
  [...chain, out].reduce((from, to) => from.pipe(to));
  const first = chain[0]!;
  // Arrival times of the raw reads still inside the first decoder: the head is the one it is working on.
  const stamps: number[] = [];
  let lastStampMs = performance.now();
  raw.on('data', (chunk: Buffer) => {
    lastStampMs = performance.now();
    stamps.push(lastStampMs);
    if (!first.write(chunk, () => stamps.shift())) raw.pause();
  });
  first.on('drain', () => raw.resume());
  raw.on('end', () => first.end());
  // A socket error keeps its own kind (connect_reset, ...).
  raw.on('error', (error) => out.destroy(error));
  for (const decoder of chain) {
    decoder.on('error', (error) => {
      if (!out.destroyed) out.destroy(new ContentDecodingError(encoding, error));
    });
  }
  out.once('close', () => {
    for (const decoder of chain) decoder.destroy();
    if (!raw.destroyed && !raw.readableEnded) {
      raw.on('error', () => {});
      raw.destroy();
    }
  });
  return { body: out, arrivalMs: () => stamps[0] ?? lastStampMs, encoding };
}
