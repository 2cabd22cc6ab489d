import { performance } from 'node:perf_hooks';

/** An opaque handle for a scheduled callback. */
export type TimerHandle = unknown;

/**
 * Where the engine gets time and timers. Times are milliseconds on a monotonic scale. The server uses the real
 * clock; tests drive the engine with VirtualClock so the model is checked without any wall-clock timing.
 */
export interface Clock {
  /** Current time, ms. */
  now(): number;
  /** Calls `fn` once at absolute time `atMs` (at once, asynchronously, if it is already past). */
  setTimer(atMs: number, fn: () => void): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** The real clock: `performance.now()` and `setTimeout` (unref'd timers are not used: a running step keeps the process alive). */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimer(atMs, fn) {
    return setTimeout(fn, Math.max(0, atMs - performance.now()));
  },
  clearTimer(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

interface VirtualTimer {
  atMs: number;
  seq: number;
  fn: () => void;
}

/** A manual clock for deterministic tests: time moves only through `advance`/`runUntilIdle`. */
export class VirtualClock implements Clock {
  #nowMs: number;
  #seq = 0;
  #timers: VirtualTimer[] = [];

  constructor(startMs = 0) {
    this.#nowMs = startMs;
  }

  now(): number {
    return this.#nowMs;
  }

  setTimer(atMs: number, fn: () => void): TimerHandle {
    const timer: VirtualTimer = { atMs: Math.max(atMs, this.#nowMs), seq: this.#seq++, fn };
    this.#timers.push(timer);
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    const i = this.#timers.indexOf(handle as VirtualTimer);
    if (i !== -1) this.#timers.splice(i, 1);
  }

  /** Number of pending timers (the engine keeps at most one). */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Fires, in time order, every timer due up to `now + ms`, then sets the time to `now + ms`. */
  advance(ms: number): void {
    const until = this.#nowMs + ms;
    for (;;) {
      const next = this.#earliest();
      if (next === undefined || next.atMs > until) break;
      this.#fire(next);
    }
    this.#nowMs = until;
  }

  /** Fires timers in order until none is left (or `maxTimers` fired, a guard against a model that never idles). */
  runUntilIdle(maxTimers = 1_000_000): void {
    for (let i = 0; i < maxTimers; i++) {
      const next = this.#earliest();
      if (next === undefined) return;
      this.#fire(next);
    }
    throw new Error('VirtualClock.runUntilIdle: too many timers');
  }

  #earliest(): VirtualTimer | undefined {
    let best: VirtualTimer | undefined;
    for (const t of this.#timers) if (best === undefined || t.atMs < best.atMs || (t.atMs === best.atMs && t.seq < best.seq)) best = t;
    return best;
  }

  #fire(timer: VirtualTimer): void {
    this.#timers.splice(this.#timers.indexOf(timer), 1);
    this.#nowMs = Math.max(this.#nowMs, timer.atMs);
    timer.fn();
  }
}
