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
 * Keys are numbers (the chained hashes, a trace's chained hash ids), held in a typed-array index (block-index.ts); other
 * key types (tests, small pools) are first mapped to numbers, one per distinct key cached.
 *
 * Each operation that walks blocks is also a stepped generator (`admitSteps`, `growSteps`, `releaseSteps`): it pauses
 * (yields) after every `stepBlocks` blocks, so a caller can let the event loop go while a 10 MB prompt's ~156,000
 * blocks are registered (issue #14). A caller that runs nothing else on the pool between a generator's steps gets
 * exactly what the plain method gives; the plain methods run their generator to its end.
 */

import { BlockIndex } from './block-index.js';

/** Blocks a stepped operation handles between two pauses: well under a millisecond of index work. */
export const DEFAULT_STEP_BLOCKS = 1024;

/** Shards of an infinite pool's index (the most): a growth copies 1/256 of it. */
const MAX_SHARDS = 256;
/**
 * A finite pool's index has about this many blocks per shard at capacity (a growth copies well under a millisecond),
 * and at least MIN_SHARDS shards: held blocks can take it far past its capacity (a 10 MB prompt's ~156,000 blocks in
 * one shard: a 6 ms growth), while 256 empty shards cost ~0.5 ms and ~330 KB to make.
 */
const BLOCKS_PER_SHARD = 4096;
const MIN_SHARDS = 16;

/** Runs a stepped operation to its end at once and returns its value. */
function drain<R>(steps: Generator<void, R, void>): R {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** The blocks one request holds in a BlockPool between its admission and its release. */
export interface BlockLease {
  /** The pool's entries of the cached blocks it references: the hits, then the blocks it registered (pool-internal). */
  readonly entries: number[];
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
   * Cached blocks: key -> entry with the references held by requests in flight. The unreferenced ones are also in the
   * index's LRU list, least recently released first: eviction takes from its head. With infinite capacity the index
   * is untracked: nothing is evicted, so neither references nor order need upkeep.
   */
  readonly #index: BlockIndex;
  /** Keys that are not numbers -> the numbers that stand for them in the index, and back (see the comment at the top). */
  #interned: Map<K, number> | undefined;
  #internedKeys: Map<number, K> | undefined;
  #nextInterned = 0;
  /** Cached blocks with no reference (evictable: the LRU list's length). */
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
    let shards = MIN_SHARDS;
    while (shards < MAX_SHARDS && shards * BLOCKS_PER_SHARD < capacity) shards *= 2;
    this.#index = new BlockIndex({ shards, tracked: this.#tracked });
  }

  /** Blocks cached (referenced or not). */
  get cachedBlocks(): number {
    return this.#index.size;
  }

  /** Blocks in use: cached plus private ones held by requests. */
  get usedBlocks(): number {
    return this.#index.size + this.#private;
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
    return this.#index.find(this.#lookupKey(key)) >= 0;
  }

  /** The number standing for `key` in the index, to look it up (NaN, never found, for a key never interned). */
  #lookupKey(key: K): number {
    if (typeof key === 'number') return key;
    return this.#interned?.get(key) ?? NaN;
  }

  /** The number standing for `key` in the index, to add it. */
  #addKey(key: K): number {
    if (typeof key === 'number') return key;
    this.#interned ??= new Map();
    this.#internedKeys ??= new Map();
    let n = this.#interned.get(key);
    if (n === undefined) {
      n = this.#nextInterned++;
      this.#interned.set(key, n);
      this.#internedKeys.set(n, key);
    }
    return n;
  }

  /** Removes entry `id` from the index (and its interned key, if any). */
  #remove(id: number): void {
    if (this.#internedKeys !== undefined) {
      const n = this.#index.keyOf(id);
      this.#interned!.delete(this.#internedKeys.get(n)!);
      this.#internedKeys.delete(n);
    }
    this.#index.remove(id);
  }

  /**
   * How many leading `keys` are cached, at most `maxBlocks`. Touches nothing. `knownCached`: leading keys the caller
   * knows are cached (with infinite capacity, a sequence's blocks registered before stay), not looked up again.
   */
  match(keys: readonly K[], maxBlocks = keys.length, knownCached = 0): number {
    return drain(this.#matchSteps(keys, maxBlocks, knownCached, undefined));
  }

  /** `match`; with `hold`, each block hit also takes a reference and its entry joins `hold` (an admission). */
  *#matchSteps(keys: readonly K[], maxBlocks: number, knownCached: number, hold: number[] | undefined): Generator<void, number, void> {
    const n = Math.min(keys.length, maxBlocks);
    const index = this.#index;
    let i = this.#tracked ? 0 : Math.min(knownCached, n);
    for (let step = 0; i < n; i++) {
      const id = index.find(this.#lookupKey(keys[i]!));
      if (id < 0) break;
      if (hold !== undefined) {
        const refs = index.refs(id);
        if (refs === 0) {
          index.unlinkLru(id);
          this.#unreferenced -= 1;
        }
        index.setRefs(id, refs + 1);
        hold.push(id);
      }
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
  admit(keys: readonly K[], totalBlocks: number, maxHitBlocks = keys.length, registerNow = true, knownCached = 0): { lease: BlockLease; hitBlocks: number } {
    return drain(this.admitSteps(keys, totalBlocks, maxHitBlocks, registerNow, knownCached));
  }

  /** `admit` as a stepped operation (see the comment at the top). */
  *admitSteps(keys: readonly K[], totalBlocks: number, maxHitBlocks = keys.length, registerNow = true, knownCached = 0): Generator<void, { lease: BlockLease; hitBlocks: number }, void> {
    const lease: BlockLease = { entries: [], privateBlocks: 0, heldBlocks: 0, registeredBlocks: 0 };
    // Tracked: each block hit takes a reference as it is found (the hits are a prefix: the same as after the match).
    const hit = yield* this.#matchSteps(keys, maxHitBlocks, knownCached, this.#tracked ? lease.entries : undefined);
    lease.heldBlocks = hit;
    lease.registeredBlocks = hit;
    yield* this.growSteps(lease, registerNow ? keys : keys.slice(0, hit), totalBlocks);
    return { lease, hitBlocks: hit };
  }

  /**
   * Extends a lease's sequence (a request's generated tokens): allocates blocks up to `totalBlocks` and registers
   * the full blocks `keys` names beyond those already registered.
   */
  grow(lease: BlockLease, keys: readonly K[], totalBlocks: number): void {
    drain(this.growSteps(lease, keys, totalBlocks));
  }

  /** `grow` as a stepped operation (see the comment at the top). */
  *growSteps(lease: BlockLease, keys: readonly K[], totalBlocks: number): Generator<void, void, void> {
    const fresh = totalBlocks - lease.heldBlocks;
    if (fresh > 0) {
      // A generator is made only when blocks must be evicted (never with infinite capacity): most growths fit.
      if (this.usedBlocks + fresh > this.capacity) yield* this.#makeRoomSteps(fresh);
      this.#private += fresh;
      lease.privateBlocks += fresh;
      lease.heldBlocks = totalBlocks;
    }
    const full = Math.min(keys.length, lease.heldBlocks);
    const index = this.#index;
    for (let b = lease.registeredBlocks, step = 0; b < full; b++) {
      if (++step === this.stepBlocks) {
        step = 0;
        yield;
      }
      // Tracked, it is registered with the lease's reference; a key already cached stays private.
      const id = index.add(this.#addKey(keys[b]!), 1);
      if (id < 0) continue;
      this.#private -= 1;
      lease.privateBlocks -= 1;
      if (this.#tracked) lease.entries.push(id);
    }
    lease.registeredBlocks = Math.max(lease.registeredBlocks, full);
  }

  /** Ends a request: its private blocks are freed, its cached blocks lose a reference (last block first). */
  release(lease: BlockLease): void {
    drain(this.releaseSteps(lease));
  }

  /** `release` as a stepped operation (see the comment at the top). */
  *releaseSteps(lease: BlockLease): Generator<void, void, void> {
    const index = this.#index;
    for (let i = lease.entries.length - 1, step = 0; i >= 0; i--) {
      // A referenced block is never evicted, so the lease's entries are still its blocks.
      const id = lease.entries[i]!;
      // Computed for every block (not only when it stays referenced): optimized before any block had two references,
      // the code had no type feedback for the subtraction and was thrown away at the first one (issue 17).
      const refs = index.refs(id) - 1;
      if (refs <= 0) {
        index.setRefs(id, 0);
        index.appendLru(id);
        this.#unreferenced += 1;
      } else index.setRefs(id, refs);
      if (++step === this.stepBlocks) {
        step = 0;
        yield;
      }
    }
    this.#private -= lease.privateBlocks;
    lease.entries.length = 0;
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
    const index = this.#index;
    if (!this.#tracked) {
      // Untracked, no block holds a reference: all go.
      index.clear();
      this.#interned?.clear();
      this.#internedKeys?.clear();
    }
    for (let id = index.lruHead; id >= 0; id = index.lruHead) {
      index.unlinkLru(id);
      this.#remove(id);
    }
    this.#unreferenced = 0;
  }

  /** Evicts least-recently-released cached blocks until `count` fresh blocks fit (or nothing is left to evict). */
  *#makeRoomSteps(count: number): Generator<void, void, void> {
    let short = this.usedBlocks + count - this.capacity;
    if (short <= 0) return;
    const index = this.#index;
    for (let step = 0; short > 0 && this.#unreferenced > 0; short--) {
      if (++step === this.stepBlocks) {
        step = 0;
        yield;
      }
      const id = index.lruHead;
      index.unlinkLru(id);
      this.#remove(id);
      this.#unreferenced -= 1;
      this.#evictions += 1;
    }
    if (short > 0) this.#overCapacity += short;
  }
}
