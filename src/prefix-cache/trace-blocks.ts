import { blockHash } from './block-hash.js';
import { BlockPool } from './block-pool.js';

/*
 * The theoretical prefix cache of a trace: what a server's prefix cache could reuse, from the requests' KV block hash
 * ids alone (Mooncake, Bailian). `chatload trace stats` counts with it, and so does a trace replay for each request's
 * expected cached tokens, so both report the same ratio.
 *
 * It is the run's BlockPool (vLLM's semantics: chained keys, so a block counts only after the same blocks before it;
 * only full blocks are cached; with a capacity the least recently released blocks go first, a request's tail before
 * its head) with each request admitted and released at once: requests take no time and answers take no room, so
 * with a capacity it is an upper bound on a busy server's hits.
 */

/** The key of a block after `parent` (0 for a first block) holding hash id `id`: the block hash over its two 32-bit halves. */
export function chainKey(parent: number, id: number): number {
  return blockHash(parent, [id >>> 0, Math.floor(id / 0x100000000) >>> 0], 0, 2);
}

/** A prefix cache over hash-id blocks, unbounded or holding at most `capacityBlocks` blocks (0: caches nothing). */
export class TracePrefixCache {
  readonly capacityBlocks: number;
  readonly #pool: BlockPool<number> | undefined;

  constructor(capacityBlocks = Infinity) {
    if (!(capacityBlocks >= 0)) throw new RangeError(`capacityBlocks must be >= 0, got ${capacityBlocks}`);
    this.capacityBlocks = capacityBlocks;
    this.#pool = capacityBlocks === 0 ? undefined : new BlockPool<number>(capacityBlocks);
  }

  /** Blocks cached now. */
  get size(): number {
    return this.#pool?.cachedBlocks ?? 0;
  }

  /**
   * One request whose prompt is the blocks `hashIds` (`fullBlocks` of them full; a trailing partial block is never
   * cached): returns how many leading full blocks were cached already, then caches all its full blocks.
   */
  access(hashIds: readonly number[], fullBlocks: number): number {
    if (this.#pool === undefined) return 0;
    const n = Math.min(fullBlocks, hashIds.length);
    const keys = new Array<number>(n);
    let parent = 0;
    for (let i = 0; i < n; i++) keys[i] = parent = chainKey(parent, hashIds[i]!);
    return this.#pool.access(keys);
  }
}
