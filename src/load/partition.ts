/**
 * Splitting one run into parts: worker threads on one machine, or shards across machines (--shard I/N). Every part
 * owns the conversations whose dataset index is congruent to its index modulo the part count, and an exact share of
 * each integer quantity (clients, active conversations, requests), so the parts add up to the whole with no
 * remainder lost.
 */

/** Part `index` of `count`'s share of `total`: floor(total/count), plus one for the first total%count parts. */
export function shareOf(total: number, index: number, count: number): number {
  return Math.floor(total / count) + (index < total % count ? 1 : 0);
}

/** Where part `index` starts numbering a quantity split by shareOf (e.g. its first global client id). */
export function offsetOf(total: number, index: number, count: number): number {
  let offset = 0;
  for (let i = 0; i < index; i++) offset += shareOf(total, i, count);
  return offset;
}

/** Whether the conversation at `datasetIndex` belongs to part `index` of `count`. */
export function ownsConversation(datasetIndex: number, index: number, count: number): boolean {
  return datasetIndex % count === index;
}

/**
 * The exact -n budget, taken one request at a time. Local to one event loop, or shared between worker threads
 * through a SharedArrayBuffer (Atomics make a take exact even when threads race).
 */
export class RequestBudget {
  /** [remaining (or -1 for no limit), taken] */
  readonly #cells: Int32Array;

  /** A budget of `limit` requests (undefined: unlimited), or one backed by another thread's buffer. */
  constructor(limit: number | undefined, shared?: SharedArrayBuffer) {
    this.#cells = new Int32Array(shared ?? new SharedArrayBuffer(8));
    if (shared === undefined) this.#cells[0] = limit ?? -1;
  }

  /** The buffer to hand to another thread's RequestBudget. */
  get buffer(): SharedArrayBuffer {
    return this.#cells.buffer as SharedArrayBuffer;
  }

  /** Takes one request; false when the budget is spent. */
  take(): boolean {
    if (Atomics.load(this.#cells, 0) === -1) {
      Atomics.add(this.#cells, 1, 1);
      return true;
    }
    // Decrement only while positive: a compare-and-swap loop, so racing threads never take more than the limit.
    for (;;) {
      const left = Atomics.load(this.#cells, 0);
      if (left <= 0) return false;
      if (Atomics.compareExchange(this.#cells, 0, left, left - 1) === left) {
        Atomics.add(this.#cells, 1, 1);
        return true;
      }
    }
  }

  /** True when a limit was set and nothing is left. */
  get spent(): boolean {
    return Atomics.load(this.#cells, 0) === 0;
  }

  /** Requests taken so far (by every thread sharing the budget). */
  get taken(): number {
    return Atomics.load(this.#cells, 1);
  }
}
