import { BlockPool } from '../prefix-cache/block-pool.js';

/**
 * The most replicas given a cache of their own: a router fronts a handful to a few hundred; a server that names a new
 * "replica" in every response (a request id in the header) must not make a cache per request.
 */
export const MAX_REPLICAS = 256;

/**
 * The expected-cache model's second view (issue #31): one block pool per replica, each the size of the main figure's
 * pool (the --kv-cache-tokens capacity, one server's KV cache, or infinite), fed by the same request events as the
 * one ideal cache, each request only to the replica that served it. What the one cache hits and the replica's does
 * not is the hit lost to routing (docs/METRICS.md).
 */
export class ReplicaCaches {
  readonly #capacityBlocks: number;
  readonly #stepBlocks: number;
  readonly #pools = new Map<string, BlockPool<number>>();
  /**
   * The pools are keyed by the infinite index's entry ids (BlockPool `directKeys`), as the capacity model's own pools
   * are, rather than by block hashes: a block is then hashed and looked up once per request, not once more per pool.
   */
  readonly byId: boolean;

  constructor(capacityBlocks: number, stepBlocks: number, byId = false) {
    this.#capacityBlocks = capacityBlocks;
    this.#stepBlocks = stepBlocks;
    this.byId = byId;
  }

  /** Replicas seen. */
  get size(): number {
    return this.#pools.size;
  }

  /** The replica's pool, made at its first request; undefined past MAX_REPLICAS replicas. */
  poolOf(replica: string): BlockPool<number> | undefined {
    let pool = this.#pools.get(replica);
    if (pool === undefined && this.#pools.size < MAX_REPLICAS) this.#pools.set(replica, (pool = new BlockPool<number>(this.#capacityBlocks, this.#stepBlocks, { directKeys: this.byId })));
    return pool;
  }
}
