import { MAX_TIMER_MS } from '../util/long-timer.js';
/** The three per-request timeouts, as error kinds. */
export type TimeoutKind = 'timeout_ttft' | 'timeout_idle' | 'timeout_total';

/** Limits (ms) a {@link RequestTimer} enforces. */
export interface RequestTimerLimits {
  totalMs: number;
  ttftMs: number;
  idleMs: number;
}

/**
 * The one timer behind a request's three timeouts. The hot path only writes numbers ({@link noteChunk},
 * {@link noteFirstToken}); the timer compares them with the deadlines when it fires and re-arms itself for the
 * earliest one still open, so a stream costs no timer work per chunk. Deadlines:
 * - total: sent + totalMs, always;
 * - ttft: sent + ttftMs, until the first token;
 * - idle: last network read (or the headers) + idleMs, once the headers have arrived.
 * When several have passed, the earliest deadline names the timeout; a tie goes to total, so with the defaults
 * (all three equal to the request timeout) a server that never answers is `timeout_total`.
 */
export class RequestTimer {
  readonly #sentAtMs: number;
  readonly #limits: RequestTimerLimits;
  readonly #onTimeout: (kind: TimeoutKind) => void;
  #timer: NodeJS.Timeout | undefined;
  /** The deadline (ms) the timer is armed for. */
  #armedForMs = Infinity;
  #headersSeen = false;
  #firstTokenSeen = false;
  #lastActivityAtMs: number;
  #stopped = false;

  /** Starts timing a request sent at `sentAtMs` (monotonic ms); `onTimeout` is called at most once. */
  constructor(sentAtMs: number, limits: RequestTimerLimits, onTimeout: (kind: TimeoutKind) => void) {
    this.#sentAtMs = sentAtMs;
    this.#limits = limits;
    this.#onTimeout = onTimeout;
    this.#lastActivityAtMs = sentAtMs;
    this.#arm(performance.now());
  }

  /**
   * The response headers arrived at `atMs`: the idle clock starts. Re-arms only when the idle deadline comes before
   * the one armed (with the defaults, all three limits equal, it never does: no second timer per request).
   */
  noteHeaders(atMs: number): void {
    this.#headersSeen = true;
    this.#lastActivityAtMs = atMs;
    if (!this.#stopped && this.#nextDeadlineMs() < this.#armedForMs) this.#arm(atMs);
  }

  /** A network read arrived at `atMs` (a plain field write: safe to call per chunk). */
  noteChunk(atMs: number): void {
    this.#lastActivityAtMs = atMs;
  }

  /** The first token arrived: the ttft deadline no longer applies. */
  noteFirstToken(): void {
    this.#firstTokenSeen = true;
  }

  /** Cancels the timer (the request finished or failed). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #nextDeadlineMs(): number {
    let next = this.#sentAtMs + this.#limits.totalMs;
    if (!this.#firstTokenSeen) next = Math.min(next, this.#sentAtMs + this.#limits.ttftMs);
    if (this.#headersSeen) next = Math.min(next, this.#lastActivityAtMs + this.#limits.idleMs);
    return next;
  }

  #arm(nowMs: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    // setTimeout rounds to whole ms and may fire a fraction early: #fire re-checks and re-arms.
    this.#armedForMs = this.#nextDeadlineMs();
    // At most setTimeout's 24.8 days (a longer delay fires at once): #fire re-arms for the rest.
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(this.#armedForMs - nowMs)));
    this.#timer = setTimeout(this.#fire, delayMs);
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    if (this.#stopped) return;
    const nowMs = performance.now();
    const totalAt = this.#sentAtMs + this.#limits.totalMs;
    let kind: TimeoutKind | undefined;
    let kindAt = Infinity;
    if (!this.#firstTokenSeen) {
      const ttftAt = this.#sentAtMs + this.#limits.ttftMs;
      if (nowMs >= ttftAt) {
        kind = 'timeout_ttft';
        kindAt = ttftAt;
      }
    }
    if (this.#headersSeen) {
      const idleAt = this.#lastActivityAtMs + this.#limits.idleMs;
      if (nowMs >= idleAt && idleAt < kindAt) {
        kind = 'timeout_idle';
        kindAt = idleAt;
      }
    }
    if (nowMs >= totalAt && totalAt <= kindAt) kind = 'timeout_total';
    if (kind === undefined) {
      this.#arm(nowMs);
      return;
    }
    this.#stopped = true;
    this.#onTimeout(kind);
  };
}
