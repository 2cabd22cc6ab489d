/*
 * The simulated paged KV cache with automatic prefix caching, after vLLM v1's block pool:
 * - fixed blocks of `blockSize` tokens, each with a reference count;
 * - a full block gets a hash chained over its parent block's hash and its token ids; the hash maps to the block
 *   so a later request with the same prefix reuses it;
 * - a block whose refcount drops to 0 keeps its hash (it stays cached) and joins an LRU list; it is evicted
 *   (hash dropped) only when a fresh block is needed and no never-hashed block is free.
 */

// The chained block hash is shared with chatload's expected-cache model, so both index the same blocks.
export { ROOT_BLOCK_HASH, blockHash } from '../prefix-cache/block-hash.js';
import { mix } from '../prefix-cache/block-index.js';
import { letLoopGo } from '../tokenizer/loop-turns.js';

/** Blocks put back per turn of the event loop by a long release (see KvCache.release). */
export const RELEASE_STEP_BLOCKS = 8192;

/** The block pool. Block ids are 0..numBlocks-1. All sizes in blocks unless named tokens. */
export class KvCache {
  /** Total blocks. */
  readonly numBlocks: number;
  readonly #refCount: Int32Array;
  /** Hash of each block, or -1 while it holds no full cached block. */
  readonly #hashOf: Float64Array;
  /**
   * The cached hashes' index, hash -> block: slot -> block + 1 (0: empty), open addressing with linear probing, the
   * key of a slot being its block's #hashOf. Hand-written rather than a Map: a block holds at most one hash, so the
   * table is sized once for every block and never grows; a Map grew by copying its whole table in one piece as a
   * 1.2M-token prompt's 75,000 blocks were registered (~2-4 ms at 65,536 entries, issue #14). Deletion shifts the
   * entries after it back (no tombstones).
   */
  readonly #slots: Int32Array;
  readonly #slotMask: number;
  #numCached = 0;
  /** Blocks with refcount 0 and no hash: free at no cost. */
  readonly #free: number[] = [];
  /**
   * Blocks with refcount 0 that still hold a cached hash, oldest (next to evict) first: a doubly linked list through
   * #next/#prev (-1 ends it). Hand-written rather than a Map (insertion order as the LRU order): releasing a 1.2M-token
   * prompt's 75,000 blocks into a Map grew it by copying its table again and again, ~20 ms in one piece (issue #14).
   */
  readonly #next: Int32Array;
  readonly #prev: Int32Array;
  #lruHead = -1;
  #lruTail = -1;
  #lruSize = 0;
  #evictions = 0;
  /** A long release's blocks not yet put back, the next one last (see release). */
  #unreleased: number[] = [];
  #stepping = false;

  constructor(numBlocks: number) {
    this.numBlocks = numBlocks;
    this.#refCount = new Int32Array(numBlocks);
    this.#hashOf = new Float64Array(numBlocks).fill(-1);
    this.#next = new Int32Array(numBlocks).fill(-1);
    this.#prev = new Int32Array(numBlocks).fill(-1);
    // At most half full: a power of two of at least twice the blocks.
    let slots = 16;
    while (slots < numBlocks * 2) slots *= 2;
    this.#slots = new Int32Array(slots);
    this.#slotMask = slots - 1;
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
    return this.#numCached;
  }

  /** Cached blocks evicted so far to make room. */
  get evictions(): number {
    return this.#evictions;
  }

  /** Fraction of blocks in use by running requests, 0..1 (vLLM's kv_cache_usage_perc: cached-but-free blocks count as free). */
  get usage(): number {
    return 1 - this.numAvailable / this.numBlocks;
  }

  /** Whether `block` is cached under some hash (for tests). */
  isCached(block: number): boolean {
    return this.#hashOf[block]! !== -1;
  }

  /** The block cached under `hash`, or -1. */
  #find(hash: number): number {
    const slots = this.#slots;
    const mask = this.#slotMask;
    for (let i = mix(hash) & mask; ; i = (i + 1) & mask) {
      const e = slots[i]!;
      if (e === 0) return -1;
      if (this.#hashOf[e - 1] === hash) return e - 1;
    }
  }

  /** Caches `block` (holding no hash) under `hash`, unless another block holds that hash: one probe for both. */
  #index(block: number, hash: number): void {
    const slots = this.#slots;
    const mask = this.#slotMask;
    let i = mix(hash) & mask;
    for (let e = slots[i]!; e !== 0; e = slots[i]!) {
      if (this.#hashOf[e - 1] === hash) return;
      i = (i + 1) & mask;
    }
    slots[i] = block + 1;
    this.#hashOf[block] = hash;
    this.#numCached += 1;
  }

  /** Drops `block`'s cached hash, moving back the entries whose probe passed its slot. */
  #unindex(block: number): void {
    const slots = this.#slots;
    const mask = this.#slotMask;
    let i = mix(this.#hashOf[block]!) & mask;
    while (slots[i]! !== block + 1) i = (i + 1) & mask;
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const e = slots[j]!;
      if (e === 0) break;
      const home = mix(this.#hashOf[e - 1]!) & mask;
      // The entry at j stays unless its home slot is cyclically outside (i, j]: then it moves into the hole.
      if (i <= j ? home <= i || home > j : home <= i && home > j) {
        slots[i] = e;
        i = j;
      }
    }
    slots[i] = 0;
    this.#hashOf[block] = -1;
    this.#numCached -= 1;
  }

  /** Appends `block` to the LRU list (most recently released). */
  #lruPush(block: number): void {
    this.#prev[block] = this.#lruTail;
    this.#next[block] = -1;
    if (this.#lruTail === -1) this.#lruHead = block;
    else this.#next[this.#lruTail] = block;
    this.#lruTail = block;
    this.#lruSize += 1;
  }

  /** Takes `block` out of the LRU list. */
  #lruRemove(block: number): void {
    const prev = this.#prev[block]!;
    const next = this.#next[block]!;
    if (prev === -1) this.#lruHead = next;
    else this.#next[prev] = next;
    if (next === -1) this.#lruTail = prev;
    else this.#prev[next] = prev;
    this.#prev[block] = this.#next[block] = -1;
    this.#lruSize -= 1;
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
      if (this.#refCount[b] === 0) this.#lruRemove(b);
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
        b = this.#lruHead;
        this.#lruRemove(b);
        this.#unindex(b);
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
    if (this.#hashOf[b]! !== -1) this.#lruPush(b);
    else this.#free.push(b);
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
    if (this.#hashOf[block]! === -1) this.#index(block, hash);
  }

  /** Drops every unreferenced cached block (POST /reset_prefix_cache). Returns how many were dropped. */
  resetPrefixCache(): number {
    this.#settle();
    let n = 0;
    while (this.#lruHead !== -1) {
      const b = this.#lruHead;
      this.#lruRemove(b);
      this.#unindex(b);
      this.#free.push(b);
      n++;
    }
    return n;
  }
}
