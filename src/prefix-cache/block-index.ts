/*
 * The index behind a BlockPool: number keys (53-bit block hashes) -> entry ids, each entry with a refcount and a
 * place in one LRU list, all in typed arrays. Hand-written on purpose (issue 17): a `Map` of 53-bit doubles boxes each
 * key and costs a hash of the boxed number per operation, ~56 bytes a block; here an operation is a few typed-array
 * reads (no allocation), ~20-30 bytes a block, and a request's blocks are released by entry id with no lookup at all.
 *
 * - The keys are cut into shards (up to 256) by a hash of the key; each shard is an open-addressing table with linear
 *   probing (deletion by backward shift, no tombstones) over its own entry arrays, grown by doubling. A growth copies
 *   one shard, so no one growth copies much however many blocks the index holds (issue #14: no event-loop stall,
 *   even with a 10 MB prompt's ~156,000 blocks or a run's millions).
 * - An entry id is (local index in its shard << shard bits) | shard: a small integer, stored unboxed.
 * - The LRU list (tracked indexes only) is intrusive: prev/next entry ids in the shards' Int32Arrays, -1 at the ends.
 * Keys are compared with `===` (so NaN is never found); any other number, integer or not, is a key.
 *
 * A direct index (`direct: true`) takes as keys small integers only: the entry ids of another, untracked index, which
 * never frees one (the expected-cache model's infinite index: cache-index.ts). Its table is then that id's slot in
 * pages of an Int32Array, with no hash and no probing: the model's finite pools look a prompt's blocks up by the ids one
 * lookup in the infinite index found, rather than hashing each key once per pool, and an eviction clears one slot with
 * no backward shift (issue #33: the model's hash work per request cut by more than half).
 */

/** An untracked index keeps keys only: no refcounts, no LRU list (a pool that never evicts). */
export interface BlockIndexOptions {
  /** Shards, a power of two from 1 to 256. */
  shards: number;
  /** Whether entries carry a refcount and an LRU place. */
  tracked: boolean;
  /** Keys are integers from 0 to 2^31 - 1 (another index's entry ids), addressed directly (one shard). */
  direct?: boolean;
}

/** A direct index's slots: pages of 2^16 (256 KB), made as keys reach them, so no growth copies the table. */
const PAGE_BITS = 16;
const PAGE_MASK = (1 << PAGE_BITS) - 1;

const MIN_SLOTS = 16;

/** One shard: its own table and entry arrays. */
class Shard {
  keys = new Float64Array(MIN_SLOTS / 2);
  refs: Int32Array;
  prev: Int32Array;
  next: Int32Array;
  /** Slot -> local entry index + 1 (0: empty). */
  table = new Int32Array(MIN_SLOTS);
  mask = MIN_SLOTS - 1;
  count = 0;
  /** Local indexes handed out so far (freed ones are reused first). */
  top = 0;
  /** Freed local indexes, chained through `next` (tracked shards only free). */
  free = -1;

  constructor(tracked: boolean) {
    // Written twice so that V8 takes `free` as mutable at once: set first by the first eviction, long after the
    // pool's hot code is optimized, it threw away (deoptimized) the code that had inlined `add` (issue 17).
    this.free = 0;
    this.free = -1;
    const n = tracked ? MIN_SLOTS / 2 : 0;
    this.refs = new Int32Array(n);
    this.prev = new Int32Array(n);
    this.next = new Int32Array(n);
  }
}

/** A well-mixed 32-bit hash of a number key from its two 32-bit halves (the low bits pick the shard). */
export function mix(key: number): number {
  let h = (key >>> 0) ^ Math.imul((key / 0x100000000) >>> 0, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Doubles a typed array's length, keeping its contents. */
function grown<T extends Float64Array | Int32Array>(array: T): T {
  const next = new (array.constructor as new (length: number) => T)(Math.max(MIN_SLOTS / 2, array.length * 2));
  next.set(array);
  return next;
}

/** Number keys -> entry ids with refcounts and an LRU list (see the comment at the top). */
export class BlockIndex {
  readonly tracked: boolean;
  readonly #bits: number;
  readonly #shardMask: number;
  #shards: Shard[];
  /** A direct index's table: key -> local entry index + 1 (0: none), in pages; undefined when keys are hashed. */
  #pages: Array<Int32Array | undefined> | undefined;
  #size = 0;
  /** The LRU list's ends: least recently appended first (-1: empty). */
  #head = -1;
  #tail = -1;

  constructor(options: BlockIndexOptions) {
    const { shards, tracked } = options;
    if (!(shards >= 1 && shards <= 256 && (shards & (shards - 1)) === 0)) throw new RangeError(`BlockIndex: shards must be a power of two from 1 to 256, got ${shards}`);
    if (options.direct === true && shards !== 1) throw new RangeError(`BlockIndex: a direct index has one shard, got ${shards}`);
    this.#pages = options.direct === true ? [] : undefined;
    this.tracked = tracked;
    this.#bits = Math.log2(shards);
    this.#shardMask = shards - 1;
    this.#shards = Array.from({ length: shards }, () => new Shard(tracked));
  }

  /** Entries held. */
  get size(): number {
    return this.#size;
  }

  /** The entry id of `key`, or -1. */
  find(key: number): number {
    if (this.#pages !== undefined) return this.#directSlot(key) - 1;
    const h = mix(key);
    const s = this.#shards[h & this.#shardMask]!;
    const { table, keys, mask } = s;
    for (let i = (h >>> this.#bits) & mask; ; i = (i + 1) & mask) {
      const e = table[i]!;
      if (e === 0) return -1;
      if (keys[e - 1] === key) return ((e - 1) << this.#bits) | (h & this.#shardMask);
    }
  }

  /** Adds `key` with refcount `refs` (not in the LRU list) and returns its entry id, or -1 if it is there already. */
  add(key: number, refs: number): number {
    if (this.#pages !== undefined) return this.#addDirect(key, refs);
    const h = mix(key);
    const shard = h & this.#shardMask;
    const s = this.#shards[shard]!;
    if ((s.count + 1) * 2 > s.table.length) this.#rehash(s);
    const { table, keys, mask } = s;
    let i = (h >>> this.#bits) & mask;
    for (; ; i = (i + 1) & mask) {
      const e = table[i]!;
      if (e === 0) break;
      if (keys[e - 1] === key) return -1;
    }
    const local = this.#newEntry(s, key, refs);
    table[i] = local + 1;
    return (local << this.#bits) | shard;
  }

  /** A new entry for `key` in shard `s` (a freed local index first), counted; returns its local index. */
  #newEntry(s: Shard, key: number, refs: number): number {
    let local = s.free;
    if (local >= 0) s.free = s.next[local]!;
    else {
      local = s.top++;
      if (local === s.keys.length) this.#growEntries(s);
    }
    s.keys[local] = key;
    if (this.tracked) {
      s.refs[local] = refs;
      s.prev[local] = -1;
      s.next[local] = -1;
    }
    s.count += 1;
    this.#size += 1;
    return local;
  }

  /** A direct index's slot of `key`: its local entry index + 1, 0 when it has none. */
  #directSlot(key: number): number {
    // `key >>> 0 === key`: an integer from 0 to 2^32 - 1 (NaN, negatives and fractions are never found).
    if (key >>> 0 !== key) return 0;
    const page = this.#pages![key >>> PAGE_BITS];
    return page === undefined ? 0 : page[key & PAGE_MASK]!;
  }

  /** `add` in a direct index (one shard: an entry id is its local index). */
  #addDirect(key: number, refs: number): number {
    if (!(key >>> 0 === key && key < 2 ** 31)) throw new RangeError(`BlockIndex: a direct index's keys are integers from 0 to 2^31 - 1, got ${key}`);
    const pages = this.#pages!;
    const page = (pages[key >>> PAGE_BITS] ??= new Int32Array(PAGE_MASK + 1));
    if (page[key & PAGE_MASK] !== 0) return -1;
    const local = this.#newEntry(this.#shards[0]!, key, refs);
    page[key & PAGE_MASK] = local + 1;
    return local;
  }

  /** The key of entry `id`. */
  keyOf(id: number): number {
    return this.#shards[id & this.#shardMask]!.keys[id >>> this.#bits]!;
  }

  /** The refcount of entry `id` (tracked only). */
  refs(id: number): number {
    return this.#shards[id & this.#shardMask]!.refs[id >>> this.#bits]!;
  }

  setRefs(id: number, refs: number): void {
    this.#shards[id & this.#shardMask]!.refs[id >>> this.#bits] = refs;
  }

  /** Removes entry `id` (tracked: it must not be in the LRU list). */
  remove(id: number): void {
    const s = this.#shards[id & this.#shardMask]!;
    const local = id >>> this.#bits;
    if (this.#pages !== undefined) {
      const key = s.keys[local]!;
      this.#pages[key >>> PAGE_BITS]![key & PAGE_MASK] = 0;
    } else this.#removeFromTable(s, local);
    s.count -= 1;
    this.#size -= 1;
    if (this.tracked) {
      s.next[local] = s.free;
      s.free = local;
    }
  }

  /** Takes local entry `local` out of shard `s`'s hash table. */
  #removeFromTable(s: Shard, local: number): void {
    const { table, keys, mask } = s;
    let i = (mix(keys[local]!) >>> this.#bits) & mask;
    while (table[i] !== local + 1) i = (i + 1) & mask;
    // Backward shift: an entry after the hole whose home slot is not between the hole and it moves into the hole.
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const e = table[j]!;
      if (e === 0) break;
      const home = (mix(keys[e - 1]!) >>> this.#bits) & mask;
      if (((j - home) & mask) >= ((j - i) & mask)) {
        table[i] = e;
        i = j;
      }
    }
    table[i] = 0;
  }

  /** The LRU list's first entry (least recently appended), or -1. */
  get lruHead(): number {
    return this.#head;
  }

  /**
   * The eviction rule the expected-cache model's pool and the simulator's KV cache share (issue #30): the entry
   * released longest ago (the LRU list's head) leaves the list and is returned, for its caller to drop; -1 when none.
   */
  takeLruHead(): number {
    const id = this.#head;
    if (id >= 0) this.unlinkLru(id);
    return id;
  }

  /** Appends entry `id` to the LRU list's end. */
  appendLru(id: number): void {
    const s = this.#shards[id & this.#shardMask]!;
    const local = id >>> this.#bits;
    s.prev[local] = this.#tail;
    s.next[local] = -1;
    if (this.#tail < 0) this.#head = id;
    else this.#shards[this.#tail & this.#shardMask]!.next[this.#tail >>> this.#bits] = id;
    this.#tail = id;
  }

  /** Takes entry `id` out of the LRU list (it must be in it). */
  unlinkLru(id: number): void {
    const s = this.#shards[id & this.#shardMask]!;
    const local = id >>> this.#bits;
    const prev = s.prev[local]!;
    const next = s.next[local]!;
    if (prev < 0) this.#head = next;
    else this.#shards[prev & this.#shardMask]!.next[prev >>> this.#bits] = next;
    if (next < 0) this.#tail = prev;
    else this.#shards[next & this.#shardMask]!.prev[next >>> this.#bits] = prev;
    s.prev[local] = -1;
    s.next[local] = -1;
  }

  /** Drops every entry. */
  clear(): void {
    this.#shards = this.#shards.map(() => new Shard(this.tracked));
    if (this.#pages !== undefined) this.#pages = [];
    this.#size = 0;
    this.#head = this.#tail = -1;
  }

  /** Doubles a shard's table and re-inserts its entries (one shard: a small copy however large the index). */
  #rehash(s: Shard): void {
    const old = s.table;
    const table = new Int32Array(old.length * 2);
    const mask = table.length - 1;
    for (let j = 0; j < old.length; j++) {
      const e = old[j]!;
      if (e === 0) continue;
      let i = (mix(s.keys[e - 1]!) >>> this.#bits) & mask;
      while (table[i] !== 0) i = (i + 1) & mask;
      table[i] = e;
    }
    s.table = table;
    s.mask = mask;
  }

  #growEntries(s: Shard): void {
    s.keys = grown(s.keys);
    if (!this.tracked) return;
    s.refs = grown(s.refs);
    s.prev = grown(s.prev);
    s.next = grown(s.next);
  }
}
