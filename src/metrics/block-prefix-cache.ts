/*
 * The theoretical prefix cache of a trace: what a server's prefix cache could reuse, from the requests' KV block hash
 * ids alone (Mooncake, Bailian). Used by `chatload trace stats` and, during a trace replay, for each request's
 * expected cached tokens, so both report the same ratio.
 *
 * Semantics follow the simulator's paged KV cache (sim/kv-cache.ts), vLLM's block pool: a block is cached under a
 * key chained over its parent's key (a prefix match, never a lone block in the middle); only full blocks are cached;
 * with a capacity, the least recently used blocks go first, and a request's blocks are released tail first (its head
 * blocks, the ones others share, stay longest). A request is taken as instantaneous (its blocks are freed as soon as it
 * is counted), and answers' blocks are not counted, so with a capacity this is an upper bound on a busy server's hits.
 * Self-contained on purpose: the run's global prefix index (issue #13) can replace it behind `access`.
 */

/** The key of a block after `parent` (0 for a first block) holding hash id `id`: 53 bits, an exact Map key. */
export function chainKey(parent: number, id: number): number {
  let a = (0x811c9dc5 ^ (parent >>> 0)) >>> 0;
  let b = (0x01000193 ^ Math.floor(parent / 0x100000000)) >>> 0;
  for (const v of [id >>> 0, Math.floor(id / 0x100000000) >>> 0]) {
    a = Math.imul(a ^ v, 0x01000193);
    b = Math.imul(b ^ ((v << 7) | (v >>> 25)), 0x5bd1e995);
    b ^= b >>> 13;
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) >>> 11);
}

/** A prefix cache over hash-id blocks, unbounded or holding at most `capacityBlocks` blocks. */
export class BlockPrefixCache {
  readonly capacityBlocks: number;
  /** Cached keys, least recently used first (Map order). */
  readonly #lru = new Map<number, true>();

  constructor(capacityBlocks = Infinity) {
    if (!(capacityBlocks >= 0)) throw new RangeError(`capacityBlocks must be >= 0, got ${capacityBlocks}`);
    this.capacityBlocks = capacityBlocks;
  }

  /** Blocks cached now. */
  get size(): number {
    return this.#lru.size;
  }

  /**
   * One request whose prompt is the blocks `hashIds` (`fullBlocks` of them full; a trailing partial block is never
   * cached): returns how many leading full blocks were cached already, then caches all its full blocks.
   */
  access(hashIds: readonly number[], fullBlocks: number): number {
    const n = Math.min(fullBlocks, hashIds.length);
    const keys: number[] = new Array<number>(n);
    let parent = 0;
    let hits = 0;
    let missed = false;
    for (let i = 0; i < n; i++) {
      parent = chainKey(parent, hashIds[i]!);
      keys[i] = parent;
      if (!missed && this.#lru.has(parent)) hits += 1;
      else missed = true;
    }
    if (this.capacityBlocks === Infinity) {
      for (const key of keys) this.#lru.set(key, true);
      return hits;
    }
    // Released tail first: the head blocks become the most recently used.
    for (let i = n - 1; i >= 0; i--) {
      this.#lru.delete(keys[i]!);
      this.#lru.set(keys[i]!, true);
    }
    while (this.#lru.size > this.capacityBlocks) this.#lru.delete(this.#lru.keys().next().value as number);
    return hits;
  }
}
