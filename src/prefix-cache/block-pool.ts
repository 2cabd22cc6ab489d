/*
 * A prefix cache's block pool as an index of block keys, after vLLM v1's (and the simulator's KvCache) semantics,
 * without block ids or contents: it stores one key per cached block, never text.
 * - A request takes a reference on each cached block of its prefix it hits, and allocates fresh blocks for the rest.
 * - A fresh block that fills is registered under its key (a chained block hash, or a trace's hash id) and is then
 *   cached; if the key is already cached it stays private (freed on release), as in vLLM.
 * - On release (in reverse order, so a sequence's tail goes before its head), a cached block whose refcount reaches
 *   0 stays cached and joins the LRU list; it is evicted only when a fresh block is needed and the pool is full.
 * - Blocks referenced by requests in flight are never evicted; with too few free blocks the pool runs over its
 *   capacity for a while (a server would queue or preempt instead), counted in `overCapacityBlocks`.
 * With capacity Infinity nothing is ever evicted: "every block the server has seen in this run".
 * Keys are generic (numbers for the chained hashes), so trace hash ids can be fed in directly (see `admit`).
 *
 * Each operation that walks blocks is also a stepped generator (`admitSteps`, `growSteps`, `releaseSteps`): it pauses
 * (yields) after every `stepBlocks` blocks, so a caller can let the event loop go while a 10 MB prompt's ~156,000
 * blocks are registered (issue #14). A caller that runs nothing else on the pool between a generator's steps gets
 * exactly what the plain method gives; the plain methods run their generator to its end.
 */

/** Blocks a stepped operation handles between two pauses: well under a millisecond of Map work. */
export const DEFAULT_STEP_BLOCKS = 1024;

/** What a pool keeps per cached block: its key -> references held by requests in flight. */
interface RefIndex<K> {
  readonly size: number;
  has(key: K): boolean;
  get(key: K): number | undefined;
  set(key: K, refs: number): unknown;
  delete(key: K): boolean;
  [Symbol.iterator](): Iterator<[K, number]>;
}

/** Maps an infinite pool's index is cut into (a power of two). */
const SHARDS = 256;

/**
 * The index of a pool that never evicts, cut into SHARDS Maps by a number key's low bits (other keys all go to the
 * first). A Map grows by copying all its entries into a table twice the size, in one piece: at 131,072 blocks, ~8 ms
 * (issue #14), and a run's infinite index holds millions. Cut in 256, each copy is 1/256 of that; and V8's limit of
 * 2^24 entries per Map no longer bounds the index. Its order is not kept across shards: an infinite pool needs none.
 */
class ShardedRefs<K> implements RefIndex<K> {
  readonly #shards = Array.from({ length: SHARDS }, () => new Map<K, number>());
  #size = 0;

  #shard(key: K): Map<K, number> {
    return this.#shards[typeof key === 'number' ? (key >>> 0) & (SHARDS - 1) : 0]!;
  }

  get size(): number {
    return this.#size;
  }

  has(key: K): boolean {
    return this.#shard(key).has(key);
  }

  get(key: K): number | undefined {
    return this.#shard(key).get(key);
  }

  set(key: K, refs: number): this {
    const shard = this.#shard(key);
    const before = shard.size;
    shard.set(key, refs);
    this.#size += shard.size - before;
    return this;
  }

  delete(key: K): boolean {
    const deleted = this.#shard(key).delete(key);
    if (deleted) this.#size -= 1;
    return deleted;
  }

  *[Symbol.iterator](): Iterator<[K, number]> {
    for (const shard of this.#shards) yield* shard;
  }
}

/** Runs a stepped operation to its end at once and returns its value. */
function drain<R>(steps: Generator<void, R, void>): R {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** The blocks one request holds in a BlockPool between its admission and its release. */
export interface BlockLease<K> {
  /** Cached blocks it references: the hits, then the blocks it registered. */
  readonly keys: K[];
  /** Fresh blocks it holds that are not cached (a partial tail, or a block whose key another block holds). */
  privateBlocks: number;
  /** Blocks of its sequence it holds, cached or not (its next block index). */
  heldBlocks: number;
  /** Leading blocks of its sequence registered or hit. */
  registeredBlocks: number;
}

/** A block pool over keys of type K, `capacity` blocks (Infinity for no limit). */
export class BlockPool<K = number> {
  readonly capacity: number;
  /** Blocks a stepped operation handles between pauses. */
  readonly stepBlocks: number;
  /**
   * Cached blocks: key -> references held by requests in flight. One Map is also the LRU list: a block released to 0
   * references is moved to its end (delete + set), so the unreferenced ones come least recently released first; an
   * eviction walks from the start past the referenced ones. (Two Maps cost twice the memory: ~160 bytes a block.)
   * With infinite capacity, ShardedRefs: nothing is evicted, so no order is needed.
   */
  readonly #refs: RefIndex<K>;
  /** Cached blocks with no reference (evictable). */
  #unreferenced = 0;
  /** False with infinite capacity: nothing is ever evicted, so references and LRU order need no upkeep. */
  readonly #tracked: boolean;
  #private = 0;
  #evictions = 0;
  #overCapacity = 0;

  constructor(capacity = Infinity, stepBlocks = DEFAULT_STEP_BLOCKS) {
    if (!(capacity > 0)) throw new RangeError(`BlockPool: capacity must be > 0 blocks, got ${capacity}`);
    if (!(stepBlocks >= 1)) throw new RangeError(`BlockPool: stepBlocks must be >= 1, got ${stepBlocks}`);
    this.capacity = capacity;
    this.stepBlocks = stepBlocks;
    this.#tracked = capacity !== Infinity;
    this.#refs = this.#tracked ? new Map<K, number>() : new ShardedRefs<K>();
  }

  /** Blocks cached (referenced or not). */
  get cachedBlocks(): number {
    return this.#refs.size;
  }

  /** Blocks in use: cached plus private ones held by requests. */
  get usedBlocks(): number {
    return this.#refs.size + this.#private;
  }

  /** Cached blocks evicted so far to make room. */
  get evictions(): number {
    return this.#evictions;
  }

  /** Fresh blocks handed out while the pool was full of referenced blocks (a real server would have waited). */
  get overCapacityBlocks(): number {
    return this.#overCapacity;
  }

  /** Whether `key` is cached. */
  has(key: K): boolean {
    return this.#refs.has(key);
  }

  /**
   * How many leading `keys` are cached, at most `maxBlocks`. Touches nothing. `knownCached`: leading keys the caller
   * knows are cached (with infinite capacity, a sequence's blocks registered before stay), not looked up again.
   */
  match(keys: readonly K[], maxBlocks = keys.length, knownCached = 0): number {
    return drain(this.#matchSteps(keys, maxBlocks, knownCached));
  }

  *#matchSteps(keys: readonly K[], maxBlocks: number, knownCached: number): Generator<void, number, void> {
    const n = Math.min(keys.length, maxBlocks);
    let i = this.#tracked ? 0 : Math.min(knownCached, n);
    for (let step = 0; i < n && this.#refs.has(keys[i]!); i++) {
      if (++step === this.stepBlocks) {
        step = 0;
        yield;
      }
    }
    return i;
  }

  /**
   * Admits a request whose sequence has `keys` as its full blocks and `totalBlocks` blocks in all (a partial tail
   * included): hits the longest cached prefix of at most `maxHitBlocks`, allocates the rest, and registers the full
   * blocks after the hit, unless `registerNow` is false: then `grow` registers them once they are computed (a
   * server caches a prompt's blocks as its prefill computes them, not at arrival). Returns the lease (release it when
   * the request ends) and the hit in blocks.
   */
  admit(keys: readonly K[], totalBlocks: number, maxHitBlocks = keys.length, registerNow = true, knownCached = 0): { lease: BlockLease<K>; hitBlocks: number } {
    return drain(this.admitSteps(keys, totalBlocks, maxHitBlocks, registerNow, knownCached));
  }

  /** `admit` as a stepped operation (see the comment at the top). */
  *admitSteps(keys: readonly K[], totalBlocks: number, maxHitBlocks = keys.length, registerNow = true, knownCached = 0): Generator<void, { lease: BlockLease<K>; hitBlocks: number }, void> {
    const hit = yield* this.#matchSteps(keys, maxHitBlocks, knownCached);
    const lease: BlockLease<K> = { keys: [], privateBlocks: 0, heldBlocks: 0, registeredBlocks: 0 };
    for (let i = 0, step = 0; this.#tracked && i < hit; i++) {
      const key = keys[i]!;
      const refs = this.#refs.get(key)!;
      if (refs === 0) this.#unreferenced -= 1;
      this.#refs.set(key, refs + 1);
      lease.keys.push(key);
      if (++step === this.stepBlocks) {
        step = 0;
        yield;
      }
    }
    lease.heldBlocks = hit;
    lease.registeredBlocks = hit;
    yield* this.growSteps(lease, registerNow ? keys : keys.slice(0, hit), totalBlocks);
    return { lease, hitBlocks: hit };
  }

  /**
   * Extends a lease's sequence (a request's generated tokens): allocates blocks up to `totalBlocks` and registers
   * the full blocks `keys` names beyond those already registered.
   */
  grow(lease: BlockLease<K>, keys: readonly K[], totalBlocks: number): void {
    drain(this.growSteps(lease, keys, totalBlocks));
  }

  /** `grow` as a stepped operation (see the comment at the top). */
  *growSteps(lease: BlockLease<K>, keys: readonly K[], totalBlocks: number): Generator<void, void, void> {
    const fresh = totalBlocks - lease.heldBlocks;
    if (fresh > 0) {
      yield* this.#makeRoomSteps(fresh);
      this.#private += fresh;
      lease.privateBlocks += fresh;
      lease.heldBlocks = totalBlocks;
    }
    const full = Math.min(keys.length, lease.heldBlocks);
    for (let b = lease.registeredBlocks, step = 0; b < full; b++) {
      if (++step === this.stepBlocks) {
        step = 0;
        yield;
      }
      const key = keys[b]!;
      if (this.#refs.has(key)) continue; // another block holds this prefix: this one stays private
      this.#private -= 1;
      lease.privateBlocks -= 1;
      if (!this.#tracked) {
        this.#refs.set(key, 0);
        continue;
      }
      this.#refs.set(key, 1);
      lease.keys.push(key);
    }
    lease.registeredBlocks = Math.max(lease.registeredBlocks, full);
  }

  /** Ends a request: its private blocks are freed, its cached blocks lose a reference (last block first). */
  release(lease: BlockLease<K>): void {
    drain(this.releaseSteps(lease));
  }

  /** `release` as a stepped operation (see the comment at the top). */
  *releaseSteps(lease: BlockLease<K>): Generator<void, void, void> {
    for (let i = lease.keys.length - 1, step = 0; i >= 0; i--) {
      const key = lease.keys[i]!;
      const refs = this.#refs.get(key);
      if (refs === undefined) continue;
      if (refs <= 1) {
        this.#refs.delete(key);
        this.#refs.set(key, 0);
        this.#unreferenced += 1;
      } else this.#refs.set(key, refs - 1);
      if (++step === this.stepBlocks) {
        step = 0;
        yield;
      }
    }
    this.#private -= lease.privateBlocks;
    lease.keys.length = 0;
    lease.privateBlocks = 0;
    lease.heldBlocks = 0;
  }

  /**
   * One request admitted and released at once, for a trace's hash ids (`chatload trace stats`): the hit in blocks
   * of the longest cached prefix of `keys`, every block then cached. Same as admit + release.
   */
  access(keys: readonly K[], maxHitBlocks = keys.length): number {
    const { lease, hitBlocks } = this.admit(keys, keys.length, maxHitBlocks);
    this.release(lease);
    return hitBlocks;
  }

  /** Drops every cached block no request references (a server's prefix-cache reset). */
  reset(): void {
    for (const [key, refs] of this.#refs) if (refs === 0) this.#refs.delete(key);
    this.#unreferenced = 0;
  }

  /** Evicts least-recently-released cached blocks until `count` fresh blocks fit (or nothing is left to evict). */
  *#makeRoomSteps(count: number): Generator<void, void, void> {
    let short = this.usedBlocks + count - this.capacity;
    if (short <= 0) return;
    if (this.#unreferenced > 0) {
      let step = 0;
      for (const [key, refs] of this.#refs) {
        if (short <= 0 || this.#unreferenced === 0) break;
        // Counts every block walked past (referenced ones too): a pool full of held blocks is a long walk.
        if (++step === this.stepBlocks) {
          step = 0;
          yield;
        }
        if (refs !== 0) continue;
        this.#refs.delete(key);
        this.#unreferenced -= 1;
        this.#evictions += 1;
        short -= 1;
      }
    }
    if (short > 0) this.#overCapacity += short;
  }
}
