import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { ioNow } from './io-clock.js';

// One request and its response over undici's dispatch(): the handler gets the head and each body chunk straight from
// the HTTP parser. It replaces request(), which hands the body through a Node Readable (a stream, its buffer and
// its events per chunk: ~0.1-0.3 ms of CPU per 128-event stream, bench/NOTES.md). Written against undici 7's
// handler API (onRequestStart, onResponseStart, onResponseData, onResponseEnd, onResponseError, with a controller
// that can pause, resume and abort: docs/api/Dispatcher.md).

/** How long (ms) a body may go on after its reader finished (`[DONE]`) before it is cut: a server that never ends must not pin a socket. */
export const AFTER_DONE_GRACE_MS = 2_000;

/** What reads a response body: each chunk as it arrives (`atMs`: performance.now() when the loop took it up, io-clock.ts). */
export interface BodySink {
  data(chunk: Buffer, atMs: number): void;
  /** The body ended; `atMs` is when. */
  end(atMs: number): void;
  /** The body failed (a socket error, or our own abort with its reason). */
  error(error: unknown): void;
}

/** What a body reader may do to the response it reads. Each call after the response ended is a no-op. */
export interface BodyControl {
  /** Stops reading now: the response is aborted and its connection closed (it cannot be reused mid-body). */
  stop(): void;
  /** Reads and discards the rest so the connection can be reused; cut after AFTER_DONE_GRACE_MS. */
  discardRest(): void;
  /** Backpressure: no more chunks until resume() (undici stops reading the socket). */
  pause(): void;
  resume(): void;
}

/** Called once with the response head (status 200 and above; 1xx heads are skipped): returns the body's reader. */
export type HeadHandler = (statusCode: number, headers: IncomingHttpHeaders, atMs: number, control: BodyControl) => BodySink;

/**
 * - waiting: sent (or queued), no response head yet;
 * - body: reading the body into the sink;
 * - discarding: the sink finished, the rest of the body is read and dropped;
 * - done: nothing more to do, later callbacks are ignored.
 */
type State = 'waiting' | 'body' | 'discarding' | 'done';

/** Aborts a body the reader stopped reading. Never a request's error: the reader recorded its own. */
class StoppedReading extends Error {
  constructor() {
    super('chatload stopped reading the response');
    this.name = 'StoppedReading';
  }
}

/**
 * The handler of one dispatched request. Before the head, a failure (connection refused or reset, our abort) goes to
 * `onFail` with undici's own error object (stale-connections.ts recognises it); from the head on, everything goes to
 * the sink `onHead` returned.
 */
export class Exchange implements Dispatcher.DispatchHandler, BodyControl {
  readonly #onHead: HeadHandler;
  readonly #onFail: (error: Error) => void;
  #state: State = 'waiting';
  #controller: Dispatcher.DispatchController | undefined;
  /** An abort asked for before undici handed over the controller (the request still queued for a connection). */
  #abortReason: Error | undefined;
  #sink: BodySink | undefined;
  #discardGuard: NodeJS.Timeout | undefined;
  readonly #onDraining: ((exchange: Exchange, draining: boolean) => void) | undefined;

  /** `onDraining` hears when the exchange starts and stops draining a body its reader finished (it holds its connection meanwhile). */
  constructor(onHead: HeadHandler, onFail: (error: Error) => void, onDraining?: (exchange: Exchange, draining: boolean) => void) {
    this.#onHead = onHead;
    this.#onFail = onFail;
    this.#onDraining = onDraining;
  }

  /** Aborts the request with `reason` (a timeout, the caller's signal): the failure or the sink's error gets it. */
  abort(reason: Error): void {
    if (this.#state === 'done') return;
    if (this.#controller !== undefined) {
      this.#controller.abort(reason);
      return;
    }
    // Still queued: undici aborts it as it takes a connection (onRequestStart); the failure is reported now, so a
    // deadline is kept even when every connection is busy.
    this.#abortReason = reason;
    this.#state = 'done';
    this.#onFail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason !== undefined) controller.abort(this.#abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.#state !== 'waiting') return;
    this.#state = 'body';
    try {
      const sink = this.#onHead(statusCode, headers, ioNow(), this);
      // The head handler may already have stopped the response (a coding chatload cannot decode).
      if (this.#state === 'body') this.#sink = sink;
    } catch (error) {
      this.#threw(error);
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const sink = this.#sink;
    if (sink === undefined) return;
    try {
      // The time is the phase's (io-clock.ts), taken before any parsing: TTFT and ITL are measured from when the loop
      // took the chunk up, not after the client's work on the chunks before it.
      sink.data(chunk, ioNow());
    } catch (error) {
      this.#threw(error);
    }
  }

  onResponseEnd(): void {
    const sink = this.#finish();
    try {
      sink?.end(ioNow());
    } catch (error) {
      this.#threw(error);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    const waiting = this.#state === 'waiting';
    const sink = this.#finish();
    try {
      if (waiting) this.#onFail(error);
      else sink?.error(error);
    } catch (thrown) {
      this.#threw(thrown);
    }
  }

  stop(): void {
    if (this.#state === 'done') return;
    this.#finish();
    this.#controller?.abort(new StoppedReading());
  }

  discardRest(): void {
    if (this.#state !== 'body') return;
    this.#state = 'discarding';
    this.#sink = undefined;
    this.#discardGuard = setTimeout(() => this.stop(), AFTER_DONE_GRACE_MS);
    this.#discardGuard.unref();
    this.#onDraining?.(this, true);
    this.resume();
  }

  pause(): void {
    if (this.#state === 'body') this.#controller?.pause();
  }

  resume(): void {
    if (this.#state !== 'done' && this.#controller?.paused === true) this.#controller.resume();
  }

  /**
   * A head handler or sink threw (they are written not to): the response is aborted and the error goes to `onFail`,
   * so the caller's wait always ends (undici would otherwise swallow it into an abort nobody hears of).
   */
  #threw(error: unknown): void {
    const reason = error instanceof Error ? error : new Error(String(error));
    this.#finish();
    this.#controller?.abort(reason);
    this.#onFail(reason);
  }

  /** Ends the exchange; returns the sink that was reading, if any (it hears of the end only once). */
  #finish(): BodySink | undefined {
    const sink = this.#sink;
    this.#sink = undefined;
    const wasDraining = this.#state === 'discarding';
    this.#state = 'done';
    if (wasDraining) this.#onDraining?.(this, false);
    if (this.#discardGuard !== undefined) clearTimeout(this.#discardGuard);
    this.#discardGuard = undefined;
    return sink;
  }
}
