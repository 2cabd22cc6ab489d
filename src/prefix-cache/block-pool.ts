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
 * Each operation that walks blocks can also run stepwise (`admitStepwise`, `growStepwise`, `releaseStepwise`), so a
 * caller can let the event loop go while a 10 MB prompt's ~156,000 blocks are registered (issue #14): a step handles
 * up to `stepBlocks` blocks. The first step runs at once; an operation it finishes (nearly all: a turn's tens of
 * blocks) returns its result, a longer one a generator of its remaining steps. A caller that runs nothing else on the
 * pool between the steps gets exactly what the plain method gives. One implementation serves both: each operation is
 * a loop resumable from its progress kept in the lease (`#admitSome`, `#growSome`, `#releaseSome`), run for a budget
 * of blocks, unlimited for the plain method. (Issue 17: generators for every operation, nested, cost each request
 * several generator objects and V8 much optimizing-compiler work, for pauses a common turn never needs.)
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

/** Work units (blocks) with no limit: an operation run whole. The largest small integer, so budgets stay integers. */
const ALL = 2 ** 30 - 1;

/** A lease's entries before its first: no array until one is needed. */
const NO_ENTRIES = new Int32Array(0);
/** Spare entry arrays a pool keeps: about as many as its leases in flight at once (requests, times a few pools). */
const MAX_SPARE_ENTRIES = 256;

/** Appends entry `id` to the lease's entries, doubling their array when it is full. */
function pushEntry(lease: BlockLease, id: number): void {
  if (lease.entryCount === lease.entries.length) {
    const grown = new Int32Array(Math.max(64, lease.entries.length * 2));
    grown.set(lease.entries);
    lease.entries = grown;
  }
  lease.entries[lease.entryCount++] = id;
}

/** The rest of a stepped operation: each step (between two yields) handles up to stepBlocks blocks. */
export type Steps<R> = Generator<void, R, void>;

/**
 * The steps of an operation after its first, which `step` (one step of it) did not finish: a pause before each
 * further step until one finishes it, then `result()`. Made only for a long operation: a common one finishes in its
 * first step, with no generator or closure made (see the comment at the top).
 */
function* laterSteps<R>(step: () => boolean, result: () => R): Steps<R> {
  do yield;
  while (!step());
  return result();
}

/** Whether a stepwise operation's answer is the rest of it (a generator) rather than its result. */
export function isSteps<R>(x: R | Steps<R>): x is Steps<R> {
  return typeof x === 'object' && x !== null && typeof (x as { next?: unknown }).next === 'function';
}

/** The blocks one request holds in a BlockPool between its admission and its release. */
export interface BlockLease {
  /**
   * The pool's entries of the cached blocks it references, the first `entryCount`: the hits, then the blocks it
   * registered (pool-internal; an array the pool hands out again once the lease is released).
   */
  entries: Int32Array;
  entryCount: number;
  /** Fresh blocks it holds that are not cached (a partial tail, or a block whose key another block holds). */
  privateBlocks: number;
  /** Blocks of its sequence it holds, cached or not (its next block index). */
  heldBlocks: number;
  /** Leading blocks of its sequence registered or hit. */
  registeredBlocks: number;
  /** Its admission's hit, in blocks (pool-internal while the admission runs). */
  hitBlocks: number;
  /** Pool-internal, an operation's progress between steps: its admission is still looking its prefix up ... */
  matching: boolean;
  /** ... and blocks still to evict for its latest growth. */
  roomShort: number;
}

/** An admitted request: its lease and its hit in blocks. */
export interface Admission {
  lease: BlockLease;
  hitBlocks: number;
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
  /** Entry arrays of released leases, handed to the next ones (see #releaseSome). */
  readonly #spareEntries: Int32Array[] = [];
  #evictions = 0;
  #overCapacity = 0;

  /**
   * `directKeys`: the keys are another, untracked pool's entry ids (`entryIds`), not hashes: looked up with no hashing
   * (block-index.ts, a direct index).
   */
  constructor(capacity = Infinity, stepBlocks = DEFAULT_STEP_BLOCKS, options: { directKeys?: boolean } = {}) {
    if (!(capacity > 0)) throw new RangeError(`BlockPool: capacity must be > 0 blocks, got ${capacity}`);
    if (!(stepBlocks >= 1)) throw new RangeError(`BlockPool: stepBlocks must be >= 1, got ${stepBlocks}`);
    this.capacity = capacity;
    this.stepBlocks = stepBlocks;
    this.#tracked = capacity !== Infinity;
    let shards = MIN_SHARDS;
    while (shards < MAX_SHARDS && shards * BLOCKS_PER_SHARD < capacity) shards *= 2;
    this.#index = options.directKeys === true ? new BlockIndex({ shards: 1, tracked: this.#tracked, direct: true }) : new BlockIndex({ shards, tracked: this.#tracked });
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
   * The entry ids of `keys` past the `ids.length` leading ones `ids` holds already, appended to it up to the first key
   * not cached; returns how many leading keys are cached (`ids`' new length). Only in a pool that never evicts
   * (capacity Infinity): its ids are then each key's for good, the keys of a pool made with `directKeys`.
   */
  entryIds(keys: readonly K[], ids: number[]): number {
    if (this.#tracked) throw new Error('BlockPool.entryIds: only a pool that never evicts keeps its entry ids');
    for (let i = ids.length; i < keys.length; i++) {
      const id = this.#index.find(this.#lookupKey(keys[i]!));
      if (id < 0) break;
      ids.push(id);
    }
    return ids.length;
  }

  /**
   * How many leading `keys` are cached, at most `maxBlocks`. Touches nothing. `knownCached`: leading keys the caller
   * knows are cached (with infinite capacity, a sequence's blocks registered before stay), not looked up again.
   */
  match(keys: readonly K[], maxBlocks = keys.length, knownCached = 0): number {
    const n = Math.min(keys.length, maxBlocks);
    let i = this.#tracked ? 0 : Math.min(knownCached, n);
    while (i < n && this.#index.find(this.#lookupKey(keys[i]!)) >= 0) i++;
    return i;
  }

  /**
   * Admits a request whose sequence has `keys` as its full blocks and `totalBlocks` blocks in all (a partial tail
   * included): hits the longest cached prefix of at most `maxHitBlocks`, allocates the rest, and registers the full
   * blocks after the hit, unless `registerNow` is false: then `grow` registers them once they are computed (a
   * server caches a prompt's blocks as its prefill computes them, not at arrival). Returns the lease (release it when
   * the request ends) and the hit in blocks.
   */
  admit(keys: readonly K[], totalBlocks: number, maxHitBlocks = keys.length, registerNow = true, knownCached = 0): Admission {
    return this.#admission(keys, totalBlocks, maxHitBlocks, registerNow, knownCached, ALL) as Admission;
  }

  /** `admit`, its first step at once: the admission when that was all (most are), else the steps that finish it. */
  admitStepwise(keys: readonly K[], totalBlocks: number, maxHitBlocks = keys.length, registerNow = true, knownCached = 0): Admission | Steps<Admission> {
    return this.#admission(keys, totalBlocks, maxHitBlocks, registerNow, knownCached, this.stepBlocks);
  }

  #admission(keys: readonly K[], totalBlocks: number, maxHitBlocks: number, registerNow: boolean, knownCached: number, budget: number): Admission | Steps<Admission> {
    const start = this.#tracked ? 0 : Math.min(knownCached, keys.length, maxHitBlocks);
    const lease: BlockLease = { entries: this.#spareEntries.pop() ?? NO_ENTRIES, entryCount: 0, privateBlocks: 0, heldBlocks: start, registeredBlocks: 0, hitBlocks: 0, matching: true, roomShort: 0 };
    if (this.#admitSome(lease, keys, totalBlocks, maxHitBlocks, registerNow, budget)) return { lease, hitBlocks: lease.hitBlocks };
    return laterSteps(
      () => this.#admitSome(lease, keys, totalBlocks, maxHitBlocks, registerNow, this.stepBlocks),
      () => ({ lease, hitBlocks: lease.hitBlocks }),
    );
  }

  /**
   * The admission of `lease`, resumed: up to `budget` blocks of work, true once it is done. Its progress is in the
   * lease: while `matching`, heldBlocks is the next block to look up; then the growth's (#growSome).
   */
  #admitSome(lease: BlockLease, keys: readonly K[], totalBlocks: number, maxHitBlocks: number, registerNow: boolean, budget: number): boolean {
    if (lease.matching) {
      const n = Math.min(keys.length, maxHitBlocks);
      const index = this.#index;
      let i = lease.heldBlocks;
      for (; i < n; i++) {
        if (budget-- === 0) {
          lease.heldBlocks = i;
          return false;
        }
        const id = index.find(this.#lookupKey(keys[i]!));
        if (id < 0) break;
        // Tracked: each block hit takes a reference as it is found (the hits are a prefix: the same as after the match).
        if (this.#tracked) {
          const refs = index.refs(id);
          if (refs === 0) {
            index.unlinkLru(id);
            this.#unreferenced -= 1;
          }
          index.setRefs(id, refs + 1);
          pushEntry(lease, id);
        }
      }
      lease.matching = false;
      lease.hitBlocks = lease.heldBlocks = lease.registeredBlocks = i;
    }
    return this.#growSome(lease, keys, totalBlocks, registerNow ? keys.length : lease.hitBlocks, budget);
  }

  /**
   * Extends a lease's sequence (a request's generated tokens): allocates blocks up to `totalBlocks` and registers
   * the full blocks `keys` names beyond those already registered.
   */
  grow(lease: BlockLease, keys: readonly K[], totalBlocks: number): void {
    this.#growSome(lease, keys, totalBlocks, keys.length, ALL);
  }

  /** `grow`, its first step at once: undefined when that was all (most are), else the steps that finish it. */
  growStepwise(lease: BlockLease, keys: readonly K[], totalBlocks: number): Steps<void> | undefined {
    if (this.#growSome(lease, keys, totalBlocks, keys.length, this.stepBlocks)) return undefined;
    return laterSteps(() => this.#growSome(lease, keys, totalBlocks, keys.length, this.stepBlocks), () => undefined);
  }

  /**
   * The growth of `lease` to `totalBlocks`, registering the full blocks `keys` names up to `registerUpTo`, resumed:
   * up to `budget` blocks of work, true once it is done. Its progress is in the lease: the blocks still to evict for
   * it (roomShort, the pool's shortfall counted once, at its start), then registeredBlocks.
   */
  #growSome(lease: BlockLease, keys: readonly K[], totalBlocks: number, registerUpTo: number, budget: number): boolean {
    const index = this.#index;
    const fresh = totalBlocks - lease.heldBlocks;
    if (fresh > 0) {
      lease.roomShort = Math.max(0, this.usedBlocks + fresh - this.capacity);
      this.#private += fresh;
      lease.privateBlocks += fresh;
      lease.heldBlocks = totalBlocks;
    }
    if (lease.roomShort > 0) {
      // Evicts least-recently-released cached blocks until the fresh blocks fit (or nothing is left to evict).
      let short = lease.roomShort;
      for (; short > 0 && this.#unreferenced > 0; short--) {
        if (budget-- === 0) {
          lease.roomShort = short;
          return false;
        }
        const id = index.takeLruHead();
        this.#remove(id);
        this.#unreferenced -= 1;
        this.#evictions += 1;
      }
      if (short > 0) this.#overCapacity += short;
      lease.roomShort = 0;
    }
    const full = Math.min(registerUpTo, keys.length, lease.heldBlocks);
    for (let b = lease.registeredBlocks; b < full; b++) {
      if (budget-- === 0) {
        lease.registeredBlocks = b;
        return false;
      }
      // Tracked, it is registered with the lease's reference; a key already cached stays private.
      const id = index.add(this.#addKey(keys[b]!), 1);
      if (id < 0) continue;
      this.#private -= 1;
      lease.privateBlocks -= 1;
      if (this.#tracked) pushEntry(lease, id);
    }
    lease.registeredBlocks = Math.max(lease.registeredBlocks, full);
    return true;
  }

  /** Ends a request: its private blocks are freed, its cached blocks lose a reference (last block first). */
  release(lease: BlockLease): void {
    this.#releaseSome(lease, ALL);
  }

  /** `release`, its first step at once: undefined when that was all (most are), else the steps that finish it. */
  releaseStepwise(lease: BlockLease): Steps<void> | undefined {
    if (this.#releaseSome(lease, this.stepBlocks)) return undefined;
    return laterSteps(() => this.#releaseSome(lease, this.stepBlocks), () => undefined);
  }

  /** The release of `lease`, resumed: up to `budget` blocks, true once it is done (its progress: the entries left). */
  #releaseSome(lease: BlockLease, budget: number): boolean {
    const index = this.#index;
    const entries = lease.entries;
    while (lease.entryCount > 0) {
      if (budget-- === 0) return false;
      // A referenced block is never evicted, so the lease's entries are still its blocks.
      const id = entries[--lease.entryCount]!;
      // One store for every block, the same whether it stays referenced or not: optimized before any block had two
      // references, code with a store only for that case had no type feedback there and was thrown away at the first
      // one (issue 17, --trace-deopt).
      const refs = index.refs(id) - 1;
      index.setRefs(id, refs > 0 ? refs : 0);
      if (refs <= 0) {
        index.appendLru(id);
        this.#unreferenced += 1;
      }
    }
    // Its array serves the next lease: a request's entries live as long as it does, long enough for the young
    // generation's collector to copy them, and a new array per lease cost each request ~2 KB promoted (issue #33).
    if (entries.length > 0 && this.#spareEntries.length < MAX_SPARE_ENTRIES) this.#spareEntries.push(entries);
    lease.entries = NO_ENTRIES;
    this.#private -= lease.privateBlocks;
    lease.privateBlocks = 0;
    lease.heldBlocks = 0;
    return true;
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
    for (let id = index.takeLruHead(); id >= 0; id = index.takeLruHead()) this.#remove(id);
    this.#unreferenced = 0;
  }
}
