import type { Readable } from 'node:stream';
import type { RequestError } from './types.js';
import type { ResponseCollector } from './response-collector.js';
import type { ResponseReader } from './endpoints/endpoint.js';
import type { RequestTimer } from './request-timer.js';
import { SseReader } from './sse-reader.js';
import { MAX_RESPONSE_CHARS } from './response-collector.js';

/** Most bytes a non-streaming body may have (64 MiB) before it fails as `other`. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** How long (ms) a body may go on after `[DONE]` before it is destroyed: a server that never ends must not pin a socket. */
const AFTER_DONE_GRACE_MS = 2_000;
/** Bytes of an error body read for its excerpt; the rest is discarded. */
const ERROR_BODY_BYTES = 4_096;

/** Maps an error that ended a body (socket error, or our own abort) to a RequestError. */
export type BodyErrorClassifier = (error: unknown) => RequestError;

/** The arrival time (ms) of the data being read; default: now, as each read arrives (content-encoding.ts passes its own). */
export type ArrivalClock = () => number;

const now: ArrivalClock = () => performance.now();

/**
 * Reads an SSE body into `collector`, stamping each network read with `performance.now()` before parsing it; `events`
 * (the endpoint's reader, the collector itself for chat) interprets each event. Resolves (never rejects) when the
 * stream is finished: `[DONE]` (or the endpoint's terminal event), an error, or the end of the body. After it the
 * rest of the body is drained in the background so the connection can be reused.
 */
export function readSseBody(
  body: Readable,
  collector: ResponseCollector,
  timer: RequestTimer,
  classify: BodyErrorClassifier,
  arrivalMs: ArrivalClock = now,
  events: ResponseReader = collector,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const reader = new SseReader((data, atMs) => events.onSseEvent(data, atMs), { maxEventChars: MAX_RESPONSE_CHARS });
    let firstTokenNoted = false;
    const finish = (): void => {
      detach();
      reader.stop();
      if (collector.sawDone && collector.result.error === undefined) drainAfterDone(body);
      else if (!body.destroyed) {
        body.on('error', ignore);
        body.destroy();
      }
      resolve();
    };
    const onData = (chunk: Uint8Array): void => {
      const atMs = arrivalMs();
      timer.noteChunk(atMs);
      reader.push(chunk, atMs);
      if (!firstTokenNoted && collector.result.firstTokenAtMs !== undefined) {
        firstTokenNoted = true;
        timer.noteFirstToken();
      }
      if (reader.overflowed) {
        collector.fail({ kind: 'other', message: `stream event exceeds ${MAX_RESPONSE_CHARS} characters` }, atMs);
      }
      if (collector.finished) finish();
    };
    const onEnd = (): void => {
      const atMs = performance.now();
      const midLine = reader.hasPartialLine;
      reader.end(atMs);
      if (!collector.finished) {
        const where = midLine ? ' (it ended inside a line)' : '';
        collector.fail({ kind: 'truncated_stream', message: `stream ended without ${events.endMarker ?? 'data: [DONE]'}${where}` }, atMs);
      }
      finish();
    };
    const detach = attach(body, { data: onData, end: onEnd, error: failWith(collector, classify, () => finish()) });
  });
}

/**
 * Reads a whole JSON body (a non-streaming reply, or a server that ignored `stream: true`) into `collector`.
 * The body's completion time is its first-token time: a non-streaming reply has no earlier token to see.
 */
export function readJsonBody(
  body: Readable,
  collector: ResponseCollector,
  timer: RequestTimer,
  classify: BodyErrorClassifier,
  arrivalMs: ArrivalClock = now,
  events: ResponseReader = collector,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const parts: Buffer[] = [];
    let bytes = 0;
    const finish = (): void => {
      detach();
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      const atMs = arrivalMs();
      timer.noteChunk(atMs);
      bytes += chunk.length;
      if (bytes > MAX_BODY_BYTES) {
        collector.fail({ kind: 'other', message: `response body exceeds ${MAX_BODY_BYTES} bytes` }, atMs);
        finish();
        body.on('error', ignore);
        body.destroy();
        return;
      }
      parts.push(chunk);
    };
    const onEnd = (): void => {
      const atMs = arrivalMs();
      events.acceptJsonBody(Buffer.concat(parts, bytes).toString('utf8'), atMs);
      finish();
    };
    const detach = attach(body, { data: onData, end: onEnd, error: failWith(collector, classify, () => finish()) });
  });
}

/** Reads the start of an error body (at most 4 KiB, as UTF-8 text), then discards or destroys the rest. Never rejects. */
export function readBodyExcerpt(body: Readable): Promise<string> {
  return new Promise<string>((resolve) => {
    const parts: Buffer[] = [];
    let bytes = 0;
    const finish = (): void => {
      detach();
      body.on('error', ignore);
      if (!body.readableEnded && !body.destroyed) body.destroy();
      resolve(Buffer.concat(parts, bytes).toString('utf8'));
    };
    const onData = (chunk: Buffer): void => {
      parts.push(chunk);
      bytes += chunk.length;
      if (bytes >= ERROR_BODY_BYTES) finish();
    };
    const detach = attach(body, { data: onData, end: finish, error: finish });
  });
}

/** The data/end/error listeners every reader here needs. */
interface BodyListeners {
  data(chunk: Buffer): void;
  end(): void;
  error(error: unknown): void;
}

/** Attaches the listeners to `body`; the returned function detaches them. */
function attach(body: Readable, listeners: BodyListeners): () => void {
  body.on('data', listeners.data);
  body.on('end', listeners.end);
  body.on('error', listeners.error);
  return () => {
    body.off('data', listeners.data);
    body.off('end', listeners.end);
    body.off('error', listeners.error);
  };
}

/** An error listener that records the classified error in `collector`, then finishes the read. */
function failWith(collector: ResponseCollector, classify: BodyErrorClassifier, finish: () => void): (error: unknown) => void {
  return (error) => {
    collector.fail(classify(error), performance.now());
    finish();
  };
}

function drainAfterDone(body: Readable): void {
  if (body.readableEnded || body.destroyed) return;
  body.on('error', ignore);
  const guard = setTimeout(() => body.destroy(), AFTER_DONE_GRACE_MS);
  guard.unref();
  body.once('close', () => clearTimeout(guard));
  body.resume();
}

function ignore(): void {}
