import { onAbort } from '../util/abort-listeners.js';

/**
 * --max-concurrency: at most `limit` requests in flight; the rest wait in FIFO order. The time each waited is
 * returned, so it can be recorded as queue time (part of the schedule lag, never hidden inside latency).
 * --max-queue bounds the wait: with no slot free and `maxQueue` already waiting, the queue is `full` and the caller
 * drops the request (k6's dropped_iterations).
 */
export class ConcurrencyLimit {
  #free: number;
  readonly #maxQueue: number;
  readonly #waiters: Array<{ grant: (waitedMs: number | null) => void; since: number; done: boolean }> = [];
  #head = 0;
  // Waiters that gave up (the run stopped) stay in the list until reached: counted here so `waiting` stays exact.
  #gaveUp = 0;

  constructor(limit: number, maxQueue = Number.POSITIVE_INFINITY) {
    this.#free = limit;
    this.#maxQueue = maxQueue;
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.#waiters.length - this.#head - this.#gaveUp;
  }

  /** True when a request arriving now would have to wait and the queue already holds --max-queue: it is dropped. */
  get full(): boolean {
    return this.#free === 0 && this.waiting >= this.#maxQueue;
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
        if (waiter.done) return;
        this.#gaveUp += 1;
        waiter.grant(null);
      });
      this.#waiters.push(waiter);
    });
  }

  /** Gives a slot back: to the longest waiter, or to the pool. */
  release(): void {
    while (this.#head < this.#waiters.length) {
      const waiter = this.#waiters[this.#head]!;
      this.#head += 1;
      if (waiter.done) {
        this.#gaveUp -= 1; // it gave up (the run stopped)
        continue;
      }
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
