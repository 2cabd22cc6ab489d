import type { RouterKind } from '../options/values/replicas.js';
import { Rng } from '../util/rng.js';
import { BlockHashChain } from '../prefix-cache/block-hash.js';
import { ROOT_BLOCK_HASH, blockHash } from './kv-cache.js';

/*
 * The simulator's router (issue #31): which replica serves a request. Each kind follows a real router's policy, read
 * from its source and cited in docs/ENGINES.md ("Routers"):
 * - round-robin: the next replica in turn (Dynamo's default --router-mode, SGLang's and vLLM's round_robin);
 * - random: a seeded uniform draw (SGLang's random policy), the same sequence for the same --seed;
 * - sticky: a session's every request to one replica, by rendezvous hashing of the X-Session-ID header (consistent
 *   hashing, as vLLM production-stack's session router and SGLang's consistent_hash policy do); without the header,
 *   the least loaded replica (production-stack's fallback to the lowest-QPS engine);
 * - prefix: the replica whose KV cache holds the longest prefix of the prompt, read from the replicas' real caches
 *   (llm-d's precise prefix-cache scorer, fed by KV events), with SGLang's cache-aware rules around it: shortest queue
 *   when the load is imbalanced, and the replica with the smallest cache when no replica matches enough of the prompt.
 */

/** What the router reads of a replica. */
export interface RoutableReplica {
  /** Requests in flight (admitted plus waiting). */
  readonly load: number;
  /** Blocks holding a cached prefix. */
  readonly cachedBlocks: number;
  /** Blocks of the prompt cached here from its start (block i's hash is hashAt(i)). */
  prefixHitBlocks(promptTokens: number, hashAt: (block: number) => number): number;
}

/** What the router reads of a request. */
export interface RouteRequest {
  /** The X-Session-ID header, or null. */
  readonly sessionId: string | null;
  /** The prompt's token ids, as the replica will cache them. */
  readonly promptIds: ArrayLike<number>;
}

/**
 * SGLang router's cache-aware defaults (sgl-router, PolicyConfig::CacheAware): a match above this share of the prompt
 * goes to the matching replica; below it, the request is treated as new.
 */
export const CACHE_THRESHOLD = 0.3;
/** SGLang's balance_abs_threshold: imbalanced when the busiest replica has more than this many more requests in flight... */
export const BALANCE_ABS_THRESHOLD = 64;
/** ...and more than this many times the least busy one's (balance_rel_threshold). */
export const BALANCE_REL_THRESHOLD = 1.5;

/** Prompt ids block-hashed per turn of the loop by pickYielding (~1-2 ms of hashing). */
export const ROUTE_HASH_STEP_IDS = 256 * 1024;

/** 32-bit FNV-1a of a string, then mixed with `salt` (rendezvous hashing's per-replica weight). */
function sessionWeight(session: string, salt: number): number {
  let h = 0x811c9dc5 ^ Math.imul(salt + 1, 0x9e3779b1);
  for (let i = 0; i < session.length; i++) h = Math.imul(h ^ session.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** Picks a replica per request. `pick` is O(replicas), plus, for prefix, the hashing of the longest cached prefix. */
export class Router {
  readonly kind: RouterKind;
  readonly #replicas: readonly RoutableReplica[];
  readonly #blockSize: number;
  readonly #rng: Rng;
  #turn = 0;

  constructor(kind: RouterKind, replicas: readonly RoutableReplica[], options: { seed: number; blockSize: number }) {
    this.kind = kind;
    this.#replicas = replicas;
    this.#blockSize = options.blockSize;
    this.#rng = Rng.derive(options.seed, 0x2007e);
  }

  /** The index of the replica that serves `req`. */
  pick(req: RouteRequest): number {
    const n = this.#replicas.length;
    if (n === 1) return 0;
    switch (this.kind) {
      case 'round-robin':
        return this.#turn++ % n;
      case 'random':
        return this.#rng.int(0, n - 1);
      case 'sticky':
        return req.sessionId === null ? this.#leastLoaded() : this.#rendezvous(req.sessionId);
      case 'prefix':
        return this.#prefix(req.promptIds);
    }
  }

  /**
   * pick, for a prompt of any length: `prefix` hashes a prompt over ROUTE_HASH_STEP_IDS ids in steps that let the loop
   * go (`yieldToLoop`) before it looks, as the engine hashes a long prompt (issue #14); the rest pick at once.
   */
  async pickYielding(req: RouteRequest, yieldToLoop: () => Promise<void>): Promise<number> {
    const ids = req.promptIds;
    if (this.kind !== 'prefix' || this.#replicas.length === 1 || ids.length <= ROUTE_HASH_STEP_IDS) return this.pick(req);
    const chain = new BlockHashChain(this.#blockSize);
    for (let upTo = 0; upTo < ids.length; ) {
      const next = Math.min(ids.length, upTo + ROUTE_HASH_STEP_IDS);
      chain.sync(ids, next, upTo);
      upTo = next;
      if (upTo < ids.length) await yieldToLoop();
    }
    return this.#prefix(ids, chain.hashes);
  }

  /** Rendezvous (highest random weight) hashing: stateless, and a session keeps its replica while the set stands. */
  #rendezvous(session: string): number {
    let best = 0;
    let bestWeight = -1;
    for (let i = 0; i < this.#replicas.length; i++) {
      const w = sessionWeight(session, i);
      if (w > bestWeight) {
        best = i;
        bestWeight = w;
      }
    }
    return best;
  }

  /** The replica with the fewest requests in flight; ties taken in turn, so an idle fleet is still spread. */
  #leastLoaded(): number {
    const n = this.#replicas.length;
    const start = this.#turn++ % n;
    let best = start;
    for (let k = 1; k < n; k++) {
      const i = (start + k) % n;
      if (this.#replicas[i]!.load < this.#replicas[best]!.load) best = i;
    }
    return best;
  }

  #imbalanced(): boolean {
    let max = 0;
    let min = Infinity;
    for (const r of this.#replicas) {
      max = Math.max(max, r.load);
      min = Math.min(min, r.load);
    }
    return max - min > BALANCE_ABS_THRESHOLD && max > min * BALANCE_REL_THRESHOLD;
  }

  /**
   * SGLang's cache-aware policy over the replicas' real caches: shortest queue when imbalanced; else the longest
   * cached prefix if it covers more than CACHE_THRESHOLD of the prompt (ties: fewer in flight, then the lower index);
   * else the replica with the fewest cached blocks (ties: fewer in flight, then the lower index).
   */
  #prefix(promptIds: ArrayLike<number>, hashed?: readonly number[]): number {
    if (this.#imbalanced()) return this.#leastLoaded();
    const bs = this.#blockSize;
    // Each block's hash made once, and only when some replica's lookup reaches it (unless made already).
    const hashes: number[] = hashed === undefined ? [] : [...hashed];
    const hashAt = (b: number): number => {
      for (let i = hashes.length; i <= b; i++) hashes.push(blockHash(i === 0 ? ROOT_BLOCK_HASH : hashes[i - 1]!, promptIds, i * bs, bs));
      return hashes[b]!;
    };
    const hits = this.#replicas.map((r) => r.prefixHitBlocks(promptIds.length, hashAt));
    const bestHit = Math.max(...hits);
    const matched = bestHit > 0 && (bestHit * bs) / promptIds.length > CACHE_THRESHOLD;
    let best = -1;
    for (let i = 0; i < this.#replicas.length; i++) {
      if (best === -1 || this.#better(i, best, matched, hits)) best = i;
    }
    return best;
  }

  /** Whether replica `i` beats `best` for a prefix pick (see #prefix). */
  #better(i: number, best: number, matched: boolean, hits: readonly number[]): boolean {
    const a = this.#replicas[i]!;
    const b = this.#replicas[best]!;
    if (matched) {
      if (hits[i]! !== hits[best]!) return hits[i]! > hits[best]!;
    } else if (a.cachedBlocks !== b.cachedBlocks) return a.cachedBlocks < b.cachedBlocks;
    return a.load < b.load;
  }
}
