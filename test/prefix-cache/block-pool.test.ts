import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { BlockHashChain, blockHashes } from '../../src/prefix-cache/block-hash.js';
import { BlockPool } from '../../src/prefix-cache/block-pool.js';
import { readKvCapacity } from '../../src/server-metrics/kv-capacity.js';
import { probeEngine } from '../../src/server-engine/detect.js';

test('BlockPool: the longest cached prefix hits; LRU evicts the least recently released, a tail before its head', () => {
  const pool = new BlockPool<number>(4);
  assert.equal(pool.access([1, 2, 3]), 0);
  assert.equal(pool.access([1, 2, 3]), 3);
  // Released tail first: 3 is the oldest, then 2. Three fresh blocks evict 3 and 2, keeping the head 1.
  assert.equal(pool.access([4, 5, 6]), 0);
  assert.equal(pool.evictions, 2);
  assert.equal(pool.access([1, 2, 3]), 1);
  assert.ok(pool.cachedBlocks <= 4);
});

test('BlockPool: blocks of a request in flight are never evicted; infinite capacity never evicts', () => {
  const pool = new BlockPool<string>(3);
  const { lease } = pool.admit(['a', 'b', 'c'], 3);
  assert.equal(pool.access(['x', 'y']), 0);
  assert.ok(pool.has('a') && pool.has('b') && pool.has('c'), 'held blocks stay');
  assert.equal(pool.overCapacityBlocks, 2);
  pool.release(lease);
  const infinite = new BlockPool<number>();
  for (let i = 0; i < 1000; i++) infinite.access([i]);
  assert.equal(infinite.evictions, 0);
  assert.equal(infinite.cachedBlocks, 1000);
});

test('BlockPool: a hit is capped, and a key already cached stays private (freed on release)', () => {
  const pool = new BlockPool<number>(10);
  pool.access([1, 2]);
  assert.equal(pool.access([1, 2], 1), 1);
  const { lease } = pool.admit([7, 1], 2);
  assert.equal(lease.privateBlocks, 1, "block 1 is cached already: this copy stays private");
  pool.release(lease);
  assert.equal(pool.usedBlocks, pool.cachedBlocks);
});

test('BlockHashChain: syncing turn by turn gives the hashes of the whole sequence', () => {
  const ids = Array.from({ length: 100 }, (_, i) => (i * 7919) % 1000);
  const chain = new BlockHashChain(16);
  chain.sync(ids, 40, 0);
  const next = ids.slice();
  next[45] = 1; // a change after the first 40 tokens: blocks 0 and 1 stay
  assert.deepEqual([...chain.sync(next, 100, 40)], blockHashes(next, 16));
  assert.equal(blockHashes(ids, 16).length, 6);
  assert.notDeepEqual(blockHashes(next, 16)[2], blockHashes(ids, 16)[2]);
});

// vLLM's /metrics states its KV cache as the info gauge vllm:cache_config_info, the CacheConfig in its labels (value 1).
const VLLM_METRICS = `# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig.
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",gpu_memory_utilization="0.9",num_cpu_blocks="None",num_gpu_blocks="27153",num_gpu_blocks_override="None",swap_space="4"} 1.0
# HELP vllm:num_requests_running Number of requests in model execution batches.
vllm:num_requests_running{engine="0",model_name="m"} 0.0
`;

test("the server's KV capacity read from vLLM's cache_config_info (a test server reproducing vLLM's /metrics)", async () => {
  assert.deepEqual(readKvCapacity(VLLM_METRICS), { blocks: 27153, blockSize: 16, source: 'vllm:cache_config_info', replicas: 1 });
  // The simulator's router page sums its replicas' blocks and says how many replicas they are (issue #31).
  assert.equal(readKvCapacity(`${VLLM_METRICS}\nchatload_sim_replicas 4\n`)?.replicas, 4);
  assert.equal(readKvCapacity('vllm:num_requests_running 0\n'), undefined);
  const server = createServer((req, res) => {
    if (req.url === '/metrics') res.end(VLLM_METRICS);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    // A run reads the capacity from the /metrics page engine detection fetched (run-benchmark.ts), not by asking again.
    const found = await probeEngine({ rootUrl: `http://127.0.0.1:${port}` });
    assert.equal(found.metrics?.status, 200);
    assert.equal(readKvCapacity(found.metrics!.text)?.blocks, 27153);
    assert.equal(found.engine.name, 'vllm');
    const elsewhere = await probeEngine({ rootUrl: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${port}/nothing` });
    assert.equal(elsewhere.metrics?.status, 404);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
