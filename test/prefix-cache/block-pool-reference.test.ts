import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BlockIndex } from '../../src/prefix-cache/block-index.js';
import { BlockPool, isSteps, type BlockLease, type Steps } from '../../src/prefix-cache/block-pool.js';

/*
 * BlockPool's typed-array index (block-index.ts) against a simple reference: the Map-based pool it replaced (one Map
 * of key -> refs whose insertion order is the LRU list: a block released to 0 references moves to its end, eviction
 * walks from its start past referenced blocks). Random sequences of admit (with and without registering at once, a
 * hit cap), grow, release, access and reset, with and without a capacity, must give the same hits, evictions, cached and
 * used blocks, over-capacity blocks and the same set of cached keys at every step. With a small step, the operations
 * run stepwise (`*Stepwise`, their steps drained), so the stepped form is checked against the reference too.
 */

/** A stepwise operation's result: at once, or after its remaining steps (counted into `steps`). */
function finish<R>(x: R | Steps<R>, steps: { count: number }): R {
  if (!isSteps(x)) return x;
  for (;;) {
    const r = x.next();
    if (r.done === true) return r.value;
    steps.count += 1;
  }
}

interface RefLease {
  keys: number[];
  privateBlocks: number;
  heldBlocks: number;
  registeredBlocks: number;
}

/** The Map-based pool BlockPool was before issue 17 (its plain methods, without steps). */
class ReferencePool {
  readonly refs = new Map<number, number>();
  unreferenced = 0;
  private = 0;
  evictions = 0;
  overCapacity = 0;
  constructor(readonly capacity: number) {}

  get tracked(): boolean {
    return this.capacity !== Infinity;
  }

  admit(keys: readonly number[], totalBlocks: number, maxHit: number, registerNow: boolean, knownCached: number): { lease: RefLease; hitBlocks: number } {
    const n = Math.min(keys.length, maxHit);
    let hit = this.tracked ? 0 : Math.min(knownCached, n);
    while (hit < n && this.refs.has(keys[hit]!)) hit++;
    const lease: RefLease = { keys: [], privateBlocks: 0, heldBlocks: hit, registeredBlocks: hit };
    for (let i = 0; this.tracked && i < hit; i++) {
      const refs = this.refs.get(keys[i]!)!;
      if (refs === 0) this.unreferenced -= 1;
      this.refs.set(keys[i]!, refs + 1);
      lease.keys.push(keys[i]!);
    }
    this.grow(lease, registerNow ? keys : keys.slice(0, hit), totalBlocks);
    return { lease, hitBlocks: hit };
  }

  grow(lease: RefLease, keys: readonly number[], totalBlocks: number): void {
    const fresh = totalBlocks - lease.heldBlocks;
    if (fresh > 0) {
      this.makeRoom(fresh);
      this.private += fresh;
      lease.privateBlocks += fresh;
      lease.heldBlocks = totalBlocks;
    }
    const full = Math.min(keys.length, lease.heldBlocks);
    for (let b = lease.registeredBlocks; b < full; b++) {
      if (this.refs.has(keys[b]!)) continue;
      this.private -= 1;
      lease.privateBlocks -= 1;
      this.refs.set(keys[b]!, this.tracked ? 1 : 0);
      if (this.tracked) lease.keys.push(keys[b]!);
    }
    lease.registeredBlocks = Math.max(lease.registeredBlocks, full);
  }

  release(lease: RefLease): void {
    for (let i = lease.keys.length - 1; i >= 0; i--) {
      const refs = this.refs.get(lease.keys[i]!);
      if (refs === undefined) continue;
      if (refs <= 1) {
        this.refs.delete(lease.keys[i]!);
        this.refs.set(lease.keys[i]!, 0);
        this.unreferenced += 1;
      } else this.refs.set(lease.keys[i]!, refs - 1);
    }
    this.private -= lease.privateBlocks;
    lease.keys.length = 0;
  }

  reset(): void {
    for (const [key, refs] of this.refs) if (refs === 0) this.refs.delete(key);
    this.unreferenced = 0;
  }

  makeRoom(count: number): void {
    let short = this.refs.size + this.private + count - this.capacity;
    if (short <= 0) return;
    for (const [key, refs] of this.refs) {
      if (short <= 0 || this.unreferenced === 0) break;
      if (refs !== 0) continue;
      this.refs.delete(key);
      this.unreferenced -= 1;
      this.evictions += 1;
      short -= 1;
    }
    if (short > 0) this.overCapacity += short;
  }
}

/** A seeded generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A pool keyed by the entry ids of an index that never evicts (`directKeys`, as the expected-cache model's capacity
 * pools are): each key is first added to that index, and the pool given its id. Same methods as a BlockPool<number>.
 */
class ByIdPool {
  readonly #ids = new BlockPool<number>(Infinity);
  readonly #pool: BlockPool<number>;
  constructor(capacity: number, stepBlocks: number) {
    this.#pool = new BlockPool<number>(capacity, stepBlocks, { directKeys: true });
  }
  /** The keys' ids, each key added to the id index first (a key it never had gets a new id). */
  #idsOf(keys: readonly number[]): number[] {
    this.#ids.access(keys);
    const ids: number[] = [];
    assert.equal(this.#ids.entryIds(keys, ids), keys.length);
    return ids;
  }
  get cachedBlocks(): number {
    return this.#pool.cachedBlocks;
  }
  get usedBlocks(): number {
    return this.#pool.usedBlocks;
  }
  get evictions(): number {
    return this.#pool.evictions;
  }
  get overCapacityBlocks(): number {
    return this.#pool.overCapacityBlocks;
  }
  has(key: number): boolean {
    return this.#pool.has(this.#idsOf([key])[0]!);
  }
  admit(keys: readonly number[], ...rest: [number, number, boolean, number]): ReturnType<BlockPool['admit']> {
    return this.#pool.admit(this.#idsOf(keys), ...rest);
  }
  admitStepwise(keys: readonly number[], ...rest: [number, number, boolean, number]): ReturnType<BlockPool['admitStepwise']> {
    return this.#pool.admitStepwise(this.#idsOf(keys), ...rest);
  }
  grow(lease: BlockLease, keys: readonly number[], total: number): void {
    this.#pool.grow(lease, this.#idsOf(keys), total);
  }
  growStepwise(lease: BlockLease, keys: readonly number[], total: number): ReturnType<BlockPool['growStepwise']> {
    return this.#pool.growStepwise(lease, this.#idsOf(keys), total);
  }
  release(lease: BlockLease): void {
    this.#pool.release(lease);
  }
  releaseStepwise(lease: BlockLease): ReturnType<BlockPool['releaseStepwise']> {
    return this.#pool.releaseStepwise(lease);
  }
  access(keys: readonly number[]): number {
    return this.#pool.access(this.#idsOf(keys));
  }
  reset(): void {
    this.#pool.reset();
  }
}

/** Random sequences of requests over a few shared prefixes, some keys 53-bit like block hashes. */
function replay(seed: number, capacity: number, stepBlocks: number, steps: { count: number }, byId = false): void {
  const stepwise = stepBlocks < 1024;
  const rnd = random(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const pool = byId ? new ByIdPool(capacity, stepBlocks) : new BlockPool<number>(capacity, stepBlocks);
  const ref = new ReferencePool(capacity);
  // Key spaces: a few prefixes of 53-bit keys, and small integers (collisions of sequences with shared blocks).
  const prefixes = Array.from({ length: 6 }, (_, p) => Array.from({ length: 40 }, (_, i) => (p === 0 ? i : Math.floor(rnd() * 2 ** 53))));
  const sequence = (): number[] => {
    const base = prefixes[int(prefixes.length)]!.slice(0, int(40));
    const extra = Array.from({ length: int(12) }, () => (rnd() < 0.5 ? int(60) : Math.floor(rnd() * 2 ** 53)));
    return [...base, ...extra];
  };
  const live: Array<{ lease: BlockLease; refLease: RefLease; keys: number[]; total: number }> = [];
  const check = (what: string): void => {
    assert.equal(pool.cachedBlocks, ref.refs.size, `${what}: cached blocks`);
    assert.equal(pool.usedBlocks, ref.refs.size + ref.private, `${what}: used blocks`);
    assert.equal(pool.evictions, ref.evictions, `${what}: evictions`);
    assert.equal(pool.overCapacityBlocks, ref.overCapacity, `${what}: over capacity`);
  };
  for (let op = 0; op < 600; op++) {
    const what = `seed ${seed}, capacity ${capacity}, op ${op}`;
    const kind = rnd();
    if (kind < 0.4 || live.length === 0) {
      const keys = sequence();
      const total = keys.length + int(4);
      const maxHit = rnd() < 0.3 ? int(keys.length + 1) : keys.length;
      const registerNow = rnd() < 0.5;
      const known = capacity === Infinity ? int(keys.length + 1) : 0;
      // The known prefix is a promise of the caller: only given when it holds.
      const knownCached = known > 0 && keys.slice(0, known).every((k) => ref.refs.has(k)) ? known : 0;
      const a = stepwise ? finish(pool.admitStepwise(keys, total, maxHit, registerNow, knownCached), steps) : pool.admit(keys, total, maxHit, registerNow, knownCached);
      const b = ref.admit(keys, total, maxHit, registerNow, knownCached);
      assert.equal(a.hitBlocks, b.hitBlocks, `${what}: hit`);
      live.push({ lease: a.lease, refLease: b.lease, keys, total });
    } else if (kind < 0.6) {
      const l = live[int(live.length)]!;
      const more = [...l.keys, ...Array.from({ length: int(6) }, () => Math.floor(rnd() * 2 ** 53))];
      const total = Math.max(l.total, more.length + int(3));
      if (stepwise) finish(pool.growStepwise(l.lease, more, total), steps);
      else pool.grow(l.lease, more, total);
      ref.grow(l.refLease, more, total);
      l.keys = more;
      l.total = total;
      assert.equal(l.lease.privateBlocks, l.refLease.privateBlocks, `${what}: private blocks`);
    } else if (kind < 0.9) {
      const [l] = live.splice(int(live.length), 1);
      if (stepwise) finish(pool.releaseStepwise(l!.lease), steps);
      else pool.release(l!.lease);
      ref.release(l!.refLease);
    } else if (kind < 0.91) {
      pool.reset();
      ref.reset();
    } else {
      const keys = sequence();
      const a = pool.access(keys);
      const b = ref.admit(keys, keys.length, keys.length, true, 0);
      ref.release(b.lease);
      assert.equal(a, b.hitBlocks, `${what}: access hit`);
    }
    check(what);
    for (const key of ref.refs.keys()) assert.ok(pool.has(key), `${what}: key ${key} cached`);
  }
}

test('BlockPool: the same hits, evictions and cached blocks as the Map-based reference on random operations', { timeout: 60_000 }, () => {
  const steps = { count: 0 };
  for (let seed = 1; seed <= 40; seed++) {
    for (const capacity of [8, 30, 120, Infinity]) replay(seed, capacity, seed % 2 === 0 ? 3 : 1024, steps);
  }
  // The stepwise operations did pause (many needed more than one step of 3 blocks).
  assert.ok(steps.count > 1000, `steps: ${steps.count}`);
});

test('BlockPool keyed by entry ids (directKeys): the same hits, evictions and cached blocks as the reference', { timeout: 60_000 }, () => {
  const steps = { count: 0 };
  for (let seed = 1; seed <= 40; seed++) {
    for (const capacity of [8, 30, 120]) replay(seed, capacity, seed % 2 === 0 ? 3 : 1024, steps, true);
  }
  assert.ok(steps.count > 500, `steps: ${steps.count}`);
});

/**
 * 20,000 random adds (of `nextKey()`) and removes on `index`: each add is -1 exactly when the key is there, each
 * removed key is gone, and at the end every key left is found under its id.
 */
function addsAndRemoves(index: BlockIndex, rnd: () => number, nextKey: () => number): void {
  const live = new Map<number, number>();
  for (let op = 0; op < 20_000; op++) {
    if (rnd() < 0.65 || live.size === 0) {
      const key = nextKey();
      const id = index.add(key, 0);
      assert.equal(id < 0, live.has(key), `add ${key}: -1 exactly when present`);
      if (id >= 0) live.set(key, id);
    } else {
      const key = [...live.keys()][Math.floor(rnd() * live.size)]!;
      index.remove(live.get(key)!);
      live.delete(key);
      assert.equal(index.find(key), -1);
    }
  }
  assert.equal(index.size, live.size);
  for (const [key, id] of live) {
    assert.equal(index.find(key), id);
    assert.equal(index.keyOf(id), key);
  }
}

test('BlockIndex: random adds and removes across growths keep every key findable, removed ones gone', () => {
  for (const shards of [1, 4, 256]) {
    const index = new BlockIndex({ shards, tracked: true });
    const rnd = random(shards);
    addsAndRemoves(index, rnd, () => (rnd() < 0.5 ? Math.floor(rnd() * 500) : Math.floor(rnd() * 2 ** 53)));
  }
});

test('BlockIndex direct: random adds and removes of small integer keys across pages; any other key is never found', () => {
  const index = new BlockIndex({ shards: 1, tracked: true, direct: true });
  const rnd = random(7);
  // Keys over three pages of 2^16, and a few far ones.
  addsAndRemoves(index, rnd, () => (rnd() < 0.9 ? Math.floor(rnd() * 3 * 65_536) : Math.floor(rnd() * 2 ** 31)));
  for (const key of [-1, 0.5, NaN, 2 ** 40, -(2 ** 31)]) assert.equal(index.find(key), -1, `find(${key})`);
  for (const key of [-1, 0.5, NaN, 2 ** 31]) assert.throws(() => index.add(key, 0), /a direct index's keys are integers from 0 to 2\^31 - 1/);
  assert.throws(() => new BlockIndex({ shards: 4, tracked: true, direct: true }), /a direct index has one shard/);
  assert.throws(() => new BlockPool<number>(10).entryIds([1], []), /only a pool that never evicts/);
});

test('BlockPool with other keys than numbers: interned keys are dropped when their blocks are evicted', () => {
  const pool = new BlockPool<string>(2);
  for (let i = 0; i < 50; i++) pool.access([`k${i}`]);
  assert.equal(pool.cachedBlocks, 2);
  assert.ok(pool.has('k49') && pool.has('k48') && !pool.has('k0'));
  assert.equal(pool.evictions, 48);
});
