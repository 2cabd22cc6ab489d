import { PassThrough, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { BodyControl, BodySink } from './exchange.js';

/** A response body to read as a stream: decoded when the server compressed it. */
export interface DecodedBody {
  body: Readable;
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

/** The codings of a `Content-Encoding` value to undo, in the order applied: none for identity, or the first unsupported. */
export function contentCodings(contentEncoding: string): { codings: string[]; encoding: string } | { unsupported: string } {
  const codings = contentEncoding
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity');
  const unknown = codings.find((c) => DECODERS[c] === undefined);
  if (unknown !== undefined) return { unsupported: unknown };
  return { codings, encoding: codings.join(', ') };
}

/** The decoders that undo `codings` (applied in the order listed, so undone from the last), piped into each other. */
function decoderChain(codings: readonly string[]): Transform[] {
  const chain = [...codings].reverse().map((c) => DECODERS[c]!());
  chain.reduce((from, to) => from.pipe(to));
  return chain;
}

/**
 * A body sink that undoes `codings` (gzip, deflate, br) as the body streams and hands the decoded bytes to the sink
 * `inner` makes, each decoded piece stamped with the arrival time of the network read it came from. chatload asks for
 * `identity`, but a server may compress anyway (issue #16: a gzip SSE body was read as garbage and reported as
 * truncated_stream). A decoding error reaches the inner sink as a ContentDecodingError naming the coding; a socket
 * error keeps its own kind. Backpressure: while the first decoder's buffer is full the response is paused.
 */
export function decodingSink(codings: readonly string[], encoding: string, control: BodyControl, inner: (control: BodyControl) => BodySink): BodySink {
  const chain = decoderChain(codings);
  const first = chain[0]!;
  const last = chain[chain.length - 1]!;
  // Arrival times of the raw reads still inside the first decoder: the head is the one it is working on.
  const stamps: number[] = [];
  let lastStampMs = performance.now();
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    for (const decoder of chain) decoder.destroy();
  };
  const sink = inner({
    stop: () => {
      close();
      control.stop();
    },
    discardRest: () => {
      close();
      control.discardRest();
    },
    pause: () => control.pause(),
    resume: () => control.resume(),
  });
  last.on('data', (chunk: Buffer) => {
    if (!closed) sink.data(chunk, stamps[0] ?? lastStampMs);
  });
  last.on('end', () => {
    if (closed) return;
    closed = true;
    sink.end(lastStampMs);
  });
  for (const decoder of chain) {
    decoder.on('error', (error) => {
      if (closed) return;
      close();
      sink.error(new ContentDecodingError(encoding, error));
    });
  }
  first.on('drain', () => control.resume());
  return {
    data(chunk, atMs) {
      if (closed) return;
      lastStampMs = atMs;
      stamps.push(atMs);
      if (!first.write(chunk, () => stamps.shift())) control.pause();
    },
    end() {
      if (!closed) first.end();
    },
    error(error) {
      if (closed) return;
      close();
      sink.error(error);
    },
  };
}

/**
 * The body to read for a response with this `Content-Encoding`, as a stream (GET /v1/models reads its body so; the
 * chat request reads through {@link decodingSink}): gzip, deflate and br are decoded as they stream; any other coding
 * gives `{ unsupported }` naming it. A decoding error names the coding; a socket error keeps its own kind.
 */
export function decodeContent(raw: Readable, contentEncoding: string): DecodedBody | { unsupported: string } {
  const parsed = contentCodings(contentEncoding);
  if ('unsupported' in parsed) return parsed;
  const { codings, encoding } = parsed;
  if (codings.length === 0) return { body: raw, encoding: '' };
  const chain = decoderChain(codings);
  // The reader gets `out`, never a decoder: a decoder's error reaches it as one that names the coding.
  const out = new PassThrough();
  chain[chain.length - 1]!.pipe(out);
  raw.pipe(chain[0]!);
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
  return { body: out, encoding };
}
