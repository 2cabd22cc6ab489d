import type { Readable } from 'node:stream';
import type { RequestError } from './types.js';
import type { ResponseCollector } from './response-collector.js';
import type { ResponseReader } from './endpoints/endpoint.js';
import type { RequestTimer } from './request-timer.js';
import { SseReader } from './sse-reader.js';
import type { BodyControl, BodySink } from './exchange.js';
import { MAX_RESPONSE_CHARS } from './response-collector.js';

/** Most bytes a non-streaming body may have (64 MiB) before it fails as `other`. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Bytes of an error body read for its excerpt; the rest is discarded. */
const ERROR_BODY_BYTES = 4_096;

/** Maps an error that ended a body (socket error, or our own abort) to a RequestError. */
export type BodyErrorClassifier = (error: unknown) => RequestError;

/**
 * What the SSE and JSON readers share: they read a body into `collector` (its request timed by `timer`, a failure
 * classed by `classify`), `events` (the endpoint's reader, the collector itself for chat) interprets it, `control`
 * steers the response, and `done` is called once, when the body is read or failed.
 */
abstract class CollectorBody implements BodySink {
  protected finished = false;

  constructor(
    protected readonly collector: ResponseCollector,
    protected readonly timer: RequestTimer,
    protected readonly classify: BodyErrorClassifier,
    protected readonly events: ResponseReader,
    protected readonly control: BodyControl,
    protected readonly done: () => void,
  ) {}

  abstract data(chunk: Buffer, atMs: number): void;
  abstract end(atMs: number): void;

  error(error: unknown): void {
    if (this.finished) return;
    this.collector.fail(this.classify(error), performance.now());
    this.finish();
  }

  /** Marks the body finished, lets the response go as fits, and calls `done`. */
  protected abstract finish(): void;
}

/**
 * Reads an SSE body into `collector` as undici hands over its chunks, each stamped (`atMs`) before it is parsed;
 * `events` interprets each event. `done` is called once the stream is finished: `[DONE]` (or the endpoint's terminal
 * event), an error, or the end of the body. After a complete stream the rest of the body is discarded in the
 * background so the connection can be reused; otherwise the response is stopped.
 */
export class SseBody extends CollectorBody {
  readonly #reader: SseReader;
  #firstTokenNoted = false;

  constructor(collector: ResponseCollector, timer: RequestTimer, classify: BodyErrorClassifier, events: ResponseReader, control: BodyControl, done: () => void) {
    super(collector, timer, classify, events, control, done);
    this.#reader = new SseReader(events === collector ? collector.onSseEvent : (data, atMs) => events.onSseEvent(data, atMs), { maxEventChars: MAX_RESPONSE_CHARS });
  }

  data(chunk: Buffer, atMs: number): void {
    if (this.finished) return;
    const collector = this.collector;
    this.timer.noteChunk(atMs);
    this.#reader.push(chunk, atMs);
    if (!this.#firstTokenNoted && collector.result.firstTokenAtMs !== undefined) {
      this.#firstTokenNoted = true;
      this.timer.noteFirstToken();
    }
    if (this.#reader.overflowed) {
      collector.fail({ kind: 'other', message: `stream event exceeds ${MAX_RESPONSE_CHARS} characters` }, atMs);
    }
    if (collector.finished) this.finish();
  }

  end(atMs: number): void {
    if (this.finished) return;
    const midLine = this.#reader.hasPartialLine;
    this.#reader.end(atMs);
    if (!this.collector.finished) {
      const where = midLine ? ' (it ended inside a line)' : '';
      this.collector.fail({ kind: 'truncated_stream', message: `stream ended without ${this.events.endMarker ?? 'data: [DONE]'}${where}` }, atMs);
    }
    this.finish();
  }

  protected finish(): void {
    this.finished = true;
    this.#reader.stop();
    const collector = this.collector;
    if (collector.sawDone && collector.result.error === undefined) this.control.discardRest();
    else this.control.stop();
    this.done();
  }
}

/**
 * Reads a whole JSON body (a non-streaming reply, or a server that ignored `stream: true`) into `collector`, then
 * calls `done`. The body's completion time is its first-token time: a non-streaming reply has no earlier token to see.
 */
export class JsonBody extends CollectorBody {
  readonly #parts: Buffer[] = [];
  #bytes = 0;

  data(chunk: Buffer, atMs: number): void {
    if (this.finished) return;
    this.timer.noteChunk(atMs);
    this.#bytes += chunk.length;
    if (this.#bytes > MAX_BODY_BYTES) {
      this.collector.fail({ kind: 'other', message: `response body exceeds ${MAX_BODY_BYTES} bytes` }, atMs);
      this.finish();
      this.control.stop();
      return;
    }
    this.#parts.push(chunk);
  }

  end(atMs: number): void {
    if (this.finished) return;
    this.events.acceptJsonBody(Buffer.concat(this.#parts, this.#bytes).toString('utf8'), atMs);
    this.finish();
  }

  protected finish(): void {
    this.finished = true;
    this.#parts.length = 0;
    this.done();
  }
}

/**
 * Reads the start of an error body (at most 4 KiB, as UTF-8 text) and hands it to `done`; the rest is not read (the
 * response is stopped). Any error ends it with what came so far.
 */
export class ExcerptBody implements BodySink {
  readonly #control: BodyControl;
  readonly #done: (text: string) => void;
  readonly #parts: Buffer[] = [];
  #bytes = 0;
  #finished = false;

  constructor(control: BodyControl, done: (text: string) => void) {
    this.#control = control;
    this.#done = done;
  }

  data(chunk: Buffer): void {
    if (this.#finished) return;
    this.#parts.push(chunk);
    this.#bytes += chunk.length;
    if (this.#bytes >= ERROR_BODY_BYTES) this.#finish();
  }

  end(): void {
    this.#finish();
  }

  error(): void {
    this.#finish();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#control.stop();
    this.#done(Buffer.concat(this.#parts, this.#bytes).toString('utf8'));
  }
}

/** The stream form of {@link ExcerptBody}, for GET /v1/models' error body. Never rejects. */
export function readBodyExcerpt(body: Readable): Promise<string> {
  return new Promise<string>((resolve) => {
    const excerpt = new ExcerptBody(
      {
        stop: () => {
          body.off('data', onData).off('end', onEnd).off('error', onEnd).on('error', ignore);
          if (!body.readableEnded && !body.destroyed) body.destroy();
        },
        discardRest: ignore,
        pause: ignore,
        resume: ignore,
      },
      resolve,
    );
    const onData = (chunk: Buffer): void => excerpt.data(chunk);
    const onEnd = (): void => excerpt.end();
    body.on('data', onData).on('end', onEnd).on('error', onEnd);
  });
}

function ignore(): void {}
