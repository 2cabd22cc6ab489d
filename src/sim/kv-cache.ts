/*
 * The simulated paged KV cache with automatic prefix caching, after vLLM v1's block pool:
 * - fixed blocks of `blockSize` tokens, each with a reference count;
 * - a full block gets a hash chained over its parent block's hash and its token ids; the hash maps to the block
 *   so a later request with the same prefix reuses it;
 * - a block whose refcount drops to 0 keeps its hash (it stays cached) and joins an LRU list; it is evicted
 *   (hash dropped) only when a fresh block is needed and no never-hashed block is free.
 * The cached blocks' index and their LRU list are prefix-cache's BlockIndex, the structure the expected-cache model's
 * BlockPool keeps them in, with the same rules (issue #30: one set of eviction rules for the simulator and the model
 * it checks): a released cached block goes to the list's end, a fresh block that finds no free one evicts its head,
 * referenced blocks never. What this class adds is what a server has and the model does not: physical block ids, a
 * fixed number of them (admission waits or preempts rather than running over), and per-block refcounts.
 */

// The chained block hash is shared with chatload's expected-cache model, so both index the same blocks.
export { ROOT_BLOCK_HASH, blockHash } from '../prefix-cache/block-hash.js';
import { BlockIndex } from '../prefix-cache/block-index.js';
import { letLoopGo } from '../util/loop-turns.js';

/** Blocks put back per turn of the event loop by a long release (see KvCache.release). */
export const RELEASE_STEP_BLOCKS = 8192;

/** The BlockIndex's shards for `numBlocks`: about 4,096 blocks each, 16 to 256 (as BlockPool sizes a finite pool's). */
function shardsFor(numBlocks: number): number {
  let shards = 16;
  while (shards < 256 && shards * 4096 < numBlocks) shards *= 2;
  return shards;
}

/** The block pool. Block ids are 0..numBlocks-1. All sizes in blocks unless named tokens. */
export class KvCache {
  /** Total blocks. */
  readonly numBlocks: number;
  readonly #refCount: Int32Array;
  /** The cached blocks: hash -> entry, and their LRU list (unreferenced ones, least recently released first). */
  readonly #index: BlockIndex;
  /** Each block's entry in the index, or -1 while it holds no cached hash. */
  readonly #entryOf: Int32Array;
  /** Each entry's block (entry ids are small integers: (local index << shard bits) | shard). */
  #blockOf = new Int32Array(1024);
  /** Blocks with refcount 0 and no hash: free at no cost. */
  readonly #free: number[] = [];
  /** Cached blocks with refcount 0 (the LRU list's length). */
  #lruSize = 0;
  #evictions = 0;
  /** A long release's blocks not yet put back, the next one last (see release). */
  #unreleased: number[] = [];
  #stepping = false;

  constructor(numBlocks: number) {
    this.numBlocks = numBlocks;
    this.#refCount = new Int32Array(numBlocks);
    this.#entryOf = new Int32Array(numBlocks).fill(-1);
    this.#index = new BlockIndex({ shards: shardsFor(numBlocks), tracked: true });
    // Pop from the end: hand out low ids first.
    for (let i = numBlocks - 1; i >= 0; i--) this.#free.push(i);
  }

  /** Blocks that can be handed out now (free plus evictable cached). */
  get numAvailable(): number {
    this.#settle();
    return this.#free.length + this.#lruSize;
  }

  /** Blocks holding a cached hash (referenced or not). */
  get numCached(): number {
    return this.#index.size;
  }

  /** Cached blocks evicted so far to make room. */
  get evictions(): number {
    return this.#evictions;
  }

  /** Share of blocks in use (cached-but-unreferenced blocks count as free), 0..1. */
  get usage(): number {
    return 1 - this.numAvailable / this.numBlocks;
  }

  /** Whether `block` is cached under some hash (for tests). */
  isCached(block: number): boolean {
    return this.#entryOf[block]! !== -1;
  }

  /** The block cached under `hash`, or -1. */
  #find(hash: number): number {
    const id = this.#index.find(hash);
    return id < 0 ? -1 : this.#blockOf[id]!;
  }

  /** Evicts the least recently released cached block (the LRU list's head, as BlockPool evicts) and returns it. */
  #evictOne(): number {
    const id = this.#index.takeLruHead();
    const block = this.#blockOf[id]!;
    this.#index.remove(id);
    this.#entryOf[block] = -1;
    this.#lruSize -= 1;
    return block;
  }

  /**
   * The longest run of cached blocks from the start, at most `maxBlocks` long, block i's hash being `hashAt(i)`
   * (undefined: no block i). A hash is asked for only once the blocks before it hit, so a caller can make each on
   * demand (the engine hashes a long prompt's blocks as a lookup reaches them). Does not acquire them.
   */
  lookup(maxBlocks: number, hashAt: (block: number) => number | undefined): number[] {
    const found: number[] = [];
    for (let i = 0; i < maxBlocks; i++) {
      const hash = hashAt(i);
      const block = hash === undefined ? -1 : this.#find(hash);
      if (block === -1) break;
      found.push(block);
    }
    return found;
  }

  /** How many of `blocks` are unreferenced (they count in numAvailable until acquired). */
  countUnreferenced(blocks: readonly number[]): number {
    this.#settle();
    let n = 0;
    for (const b of blocks) if (this.#refCount[b] === 0) n++;
    return n;
  }

  /** Takes a reference on each of `blocks` (cache hits), removing unreferenced ones from the LRU list. */
  acquire(blocks: readonly number[]): void {
    this.#settle();
    for (const b of blocks) {
      if (this.#refCount[b] === 0) {
        // A cached block hit while unreferenced leaves the LRU list.
        this.#index.unlinkLru(this.#entryOf[b]!);
        this.#lruSize -= 1;
      }
      this.#refCount[b]! += 1;
    }
  }

  /** `count` fresh blocks with refcount 1, evicting least-recently-used cached blocks as needed; null (and nothing taken) if short. */
  allocate(count: number): number[] | null {
    this.#settle();
    if (count <= 0) return [];
    if (count > this.numAvailable) return null;
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      let b = this.#free.pop();
      if (b === undefined) {
        b = this.#evictOne();
        this.#evictions += 1;
      }
      this.#refCount[b] = 1;
      out.push(b);
    }
    return out;
  }

  /**
   * Drops one reference on each of `blocks`. Released in reverse order, as vLLM does, so a sequence's tail blocks
   * are evicted before its head blocks (heads are the ones other requests share).
   *
   * A long list is put back RELEASE_STEP_BLOCKS at a time with the event loop let go between: a 1.2M-token request's
   * 75,000 blocks took 0.4-1.2 ms in one piece when its answer ended (issue #14). The blocks not yet put back are
   * put back, all at once, before any other operation that reads or changes references (numAvailable, allocate,
   * acquire, ...), so every operation sees the cache as if the release had run whole: the same hits, the same
   * evictions in the same order. (lookup, register and isCached read only the hash index, which a release leaves as it is.)
   */
  release(blocks: readonly number[]): void {
    this.#settle();
    const now = Math.max(0, blocks.length - RELEASE_STEP_BLOCKS);
    for (let i = blocks.length - 1; i >= now; i--) this.#releaseOne(blocks[i]!);
    if (now === 0) return;
    // A copy: the caller empties its list.
    this.#unreleased = blocks.slice(0, now);
    void this.#stepRelease();
  }

  #releaseOne(b: number): void {
    const rc = (this.#refCount[b]! -= 1);
    if (rc > 0) return;
    const id = this.#entryOf[b]!;
    if (id === -1) this.#free.push(b);
    else {
      this.#index.appendLru(id);
      this.#lruSize += 1;
    }
  }

  /** Puts back the rest of a long release now. */
  #settle(): void {
    const rest = this.#unreleased;
    while (rest.length > 0) this.#releaseOne(rest.pop()!);
  }

  async #stepRelease(): Promise<void> {
    if (this.#stepping) return;
    this.#stepping = true;
    while (this.#unreleased.length > 0) {
      await letLoopGo();
      const rest = this.#unreleased;
      for (let n = 0; n < RELEASE_STEP_BLOCKS && rest.length > 0; n++) this.#releaseOne(rest.pop()!);
    }
    this.#stepping = false;
  }

  /** Marks `block` (now full) as cached under `hash`, unless another block already holds that hash (then it stays private). */
  register(block: number, hash: number): void {
    if (this.#entryOf[block]! !== -1) return;
    const id = this.#index.add(hash, 0);
    if (id < 0) return;
    this.#entryOf[block] = id;
    if (id >= this.#blockOf.length) {
      let size = this.#blockOf.length * 2;
      while (size <= id) size *= 2;
      const bigger = new Int32Array(size);
      bigger.set(this.#blockOf);
      this.#blockOf = bigger;
    }
    this.#blockOf[id] = block;
  }

  /** Drops every unreferenced cached block (POST /reset_prefix_cache). Returns how many were dropped. */
  resetPrefixCache(): number {
    this.#settle();
    let n = 0;
    while (this.#index.lruHead !== -1) {
      this.#free.push(this.#evictOne());
      n++;
    }
    return n;
  }
}
