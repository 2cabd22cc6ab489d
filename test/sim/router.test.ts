// The router's long-prompt path (issue #31 with issue #14's rule): `prefix` hashes a prompt over ROUTE_HASH_STEP_IDS
// ids in steps that let the loop go, and picks what the one-piece pick picks. Real KV caches, no HTTP.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KvCache, blockHash, ROOT_BLOCK_HASH } from '../../src/sim/kv-cache.js';
import { ROUTE_HASH_STEP_IDS, Router, type RoutableReplica } from '../../src/sim/router.js';

const BLOCK = 16;

/** A replica view over a real KvCache, with the blocks of `cachedIds` registered in it. */
function replica(cachedIds: ArrayLike<number> | null): RoutableReplica {
  const kv = new KvCache(80_000);
  if (cachedIds !== null) {
    const full = Math.floor(cachedIds.length / BLOCK);
    const blocks = kv.allocate(full)!;
    let parent = ROOT_BLOCK_HASH;
    for (let b = 0; b < full; b++) {
      parent = blockHash(parent, cachedIds, b * BLOCK, BLOCK);
      kv.register(blocks[b]!, parent);
    }
    kv.release(blocks);
  }
  return {
    load: 0,
    get cachedBlocks() {
      return kv.numCached;
    },
    prefixHitBlocks: (tokens, hashAt) => kv.lookup(Math.floor((tokens - 1) / BLOCK), hashAt).length,
  };
}

describe('Router, prefix, long prompts', () => {
  test('a prompt past ROUTE_HASH_STEP_IDS is hashed in steps that let the loop go, and goes where its prefix is', { timeout: 60_000 }, async () => {
    const ids = Int32Array.from({ length: ROUTE_HASH_STEP_IDS * 2 + 1000 }, (_, i) => (i * 7919) % 50_000);
    const history = ids.subarray(0, ids.length - 500);
    const replicas = [replica(ids.subarray(0, 4000)), replica(null), replica(history), replica(null)];
    const router = new Router('prefix', replicas, { seed: 0, blockSize: BLOCK });
    let yields = 0;
    const picked = await router.pickYielding({ sessionId: null, promptIds: ids }, async () => {
      yields += 1;
      await new Promise((resolve) => setImmediate(resolve));
    });
    assert.equal(picked, 2);
    assert.equal(router.pick({ sessionId: null, promptIds: ids }), 2);
    assert.ok(yields >= 2, `let the loop go ${yields} times`);
  });
});
