import { onAbort } from '../util/abort-listeners.js';

/**
 * --max-concurrency: at most `limit` requests in flight; the rest wait in FIFO order. The time each waited is
 * returned, so it can be recorded as queue time (part of the schedule lag, never hidden inside latency).
 */
export class ConcurrencyLimit {
  #free: number;
  readonly #waiters: Array<{ grant: (waitedMs: number | null) => void; since: number; done: boolean }> = [];
  #head = 0;

  constructor(limit: number) {
    this.#free = limit;
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.#waiters.length - this.#head;
  }

  /** Waits for a slot. Resolves with the milliseconds waited, or null when `signal` fired first (no slot taken). */
  acquire(signal: AbortSignal): Promise<number | null> {
    if (signal.aborted) return Promise.resolve(null);
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve(0);
    }
    return new Promise((resolve) => {
      const since = performance.now();
      const waiter = {
        since,
        done: false,
        grant: (waitedMs: number | null) => {
          waiter.done = true;
          stopWaiting();
          resolve(waitedMs);
        },
      };
      // Thousands may wait: onAbort, not addEventListener, whose add and remove walk every listener (util/abort-listeners.ts).
      const stopWaiting = onAbort(signal, () => {
        if (!waiter.done) waiter.grant(null);
      });
      this.#waiters.push(waiter);
    });
  }

  /** Gives a slot back: to the longest waiter, or to the pool. */
  release(): void {
    while (this.#head < this.#waiters.length) {
      const waiter = this.#waiters[this.#head]!;
      this.#head += 1;
      if (waiter.done) continue; // it gave up (the run stopped)
      this.#compact();
      waiter.grant(performance.now() - waiter.since);
      return;
    }
    this.#compact();
    this.#free += 1;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#waiters.length) {
      this.#waiters.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
