import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runBenchmark, type BenchmarkResult } from '../../src/benchmark/run-benchmark.js';
import type { RoutingLoss } from '../../src/metrics/replica-types.js';
import { startSimulatorWorker, type RouterKind, type RunningSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { filler, writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

/*
 * The loss to routing end to end (issue #31): chatload runs against the simulator's 4 replicas behind each router kind
 * (docs/SIMULATOR.md, "Replicas and routers"), over loopback HTTP. Every response names its replica in
 * x-chatload-replica, which chatload reads by default (--replica-header), so each record has its replica and the
 * expected-cache model its per-replica figure; results.json's prefix_cache.routing sets the one ideal cache against
 * one cache per replica.
 * - round-robin moves each conversation's next turn to another replica, whose cache lacks its history: it loses much
 *   of what one cache would hit (more than 20%);
 * - sticky (X-Session-ID, sent with --send-conversation-id) keeps a conversation on one replica: it loses only the short
 *   shared system prompt, once on each replica (at most 2%);
 * - prefix routes to the replica holding the longest prefix of the prompt: its history's, so at most round-robin's.
 * Records' replicas are checked against each replica's own /metrics request count, and with --workers 2 (one index in
 * the coordinator, per-replica caches included) the routing figures are 1 worker's.
 *
 * The dataset: 12 conversations of 5 turns, each turn a ~150-word user message and a short answer, after a ~40-word
 * system prompt they share: the history, not the shared prompt, is most of what a cache can hit.
 */
function dataset(dir: string): string {
  const system = filler(40, 3);
  const conversations = Array.from({ length: 12 }, (_, i) => ({
    id: `c${i}`,
    messages: [
      { role: 'system' as const, content: system },
      ...Array.from({ length: 5 }, (_, turn) => [
        { role: 'user' as const, content: `conversation ${i}, turn ${turn}: ${filler(150, i * 10 + turn)}` },
        { role: 'assistant' as const, content: filler(8, i * 10 + turn + 500) },
      ]).flat(),
    ],
  }));
  return writeDataset(dir, conversations);
}

/** Requests each replica's own page counts as finished (vllm:request_success_total, every finished_reason). */
async function servedByReplica(url: string, replicas: number): Promise<number[]> {
  const counts: number[] = [];
  for (let i = 0; i < replicas; i++) {
    const res = await fetch(`${url}/replicas/${i}/metrics`, { signal: AbortSignal.timeout(30_000) });
    assert.equal(res.status, 200);
    const lines = (await res.text()).split('\n').filter((l) => l.startsWith('vllm:request_success_total{'));
    counts.push(lines.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0));
  }
  return counts;
}

describe('the loss to routing against the simulator\'s replicas (issue #31)', () => {
  const sims = new Map<RouterKind, RunningSimulator>();
  const results = new Map<string, BenchmarkResult>();
  before(async () => {
    for (const router of ['round-robin', 'sticky', 'prefix'] as const) sims.set(router, await startSimulatorWorker({ profile: 'cpu-tiny', replicas: 4, router, config: { step_base_ms: 5 } }));
  });
  after(async () => {
    for (const sim of sims.values()) await sim.close();
  });

  /** A run against `router`'s simulator (its cache emptied first), its results kept for the other tests. */
  const run = async (router: RouterKind, workers = 1): Promise<BenchmarkResult> => {
    const key = `${router}/${workers}`;
    const done = results.get(key);
    if (done !== undefined) return done;
    const dir = tempDir(`routing-${router}-${workers}`);
    // 3 clients, not 4: in lock step a conversation's next turn would come 4 requests later, on the same replica.
    const result = await runBenchmark({ url: sims.get(router)!.url, inputFile: dataset(dir), numClients: 3, workers, sendConversationId: true, earlyStop: false, resetPrefixCache: true, limitMinTokens: 8, limitMaxTokens: 8, outputDir: dir });
    results.set(key, result);
    return result;
  };

  const routing = (r: BenchmarkResult): RoutingLoss => {
    const loss = r.prefixCache.routing;
    assert.ok(loss !== undefined, 'prefix_cache.routing is present');
    assert.equal(loss.replicas, 4);
    assert.ok(loss.expected_cached_tokens_one_cache > 0);
    return loss;
  };

  test('round-robin loses more than 20% of the one-cache expectation; records name the replicas the simulator counted', { timeout: 120_000 }, async (t) => {
    const result = await run('round-robin');
    const loss = routing(result);
    t.diagnostic(`round-robin: ${JSON.stringify(loss)}`);
    assert.ok(loss.lost_to_routing_share! > 0.2, `round-robin lost ${JSON.stringify(loss)}`);
    assert.equal(loss.sessions_split, 12, 'every conversation scattered');
    const records = readRequestsJsonl(result.files.requests);
    assert.equal(records.length, 60);
    assert.ok(records.every((r) => r.replica != null && r.expected_cached_tokens_per_replica != null), 'every record has its replica and per-replica figure');
    const byRecords = [0, 1, 2, 3].map((i) => records.filter((r) => r.replica === String(i)).length);
    assert.deepEqual(byRecords, await servedByReplica(sims.get('round-robin')!.url, 4));
    assert.deepEqual(byRecords, [15, 15, 15, 15], 'round-robin spreads evenly');
    // results.json's replicas: one row per replica, by header.
    assert.deepEqual(result.replicas?.map((row) => [row.replica, row.requests, row.source]), byRecords.map((n, i) => [String(i), n, 'header']));
    // The router page sums the replicas' KV blocks: the one ideal cache holds the fleet's, each replica's pool a quarter.
    const model = result.prefixCache.model;
    assert.equal(model.replica_capacity_tokens, model.capacity_tokens! / 4);
    // The server's misses against the one ideal cache are the router's: the miss causes say so, not "unexplained".
    const misses = result.prefixCache.totals.misses;
    assert.ok(misses.tokens > 0);
    assert.ok(misses.causes.routing >= 0.9 * misses.tokens, `misses: ${JSON.stringify(misses)}`);
  });

  test('sticky (X-Session-ID) loses at most 2%: only the shared system prompt, once per replica', { timeout: 120_000 }, async (t) => {
    const result = await run('sticky');
    const loss = routing(result);
    t.diagnostic(`sticky: ${JSON.stringify(loss)}`);
    assert.ok(loss.lost_to_routing_share! <= 0.02, `sticky lost ${JSON.stringify(loss)}`);
    assert.equal(loss.sessions_split, 0, 'no conversation moved');
    const records = readRequestsJsonl(result.files.requests);
    const byRecords = [0, 1, 2, 3].map((i) => records.filter((r) => r.replica === String(i)).length);
    assert.deepEqual(byRecords, await servedByReplica(sims.get('sticky')!.url, 4));
  });

  test('prefix routing loses no more than round-robin', { timeout: 240_000 }, async (t) => {
    const prefix = routing(await run('prefix'));
    t.diagnostic(`prefix: ${JSON.stringify(prefix)}`);
    const roundRobin = routing(await run('round-robin'));
    assert.ok(prefix.lost_to_routing_share! <= roundRobin.lost_to_routing_share!, `prefix ${JSON.stringify(prefix)}, round-robin ${JSON.stringify(roundRobin)}`);
    const records = readRequestsJsonl((await run('prefix')).files.requests);
    const byRecords = [0, 1, 2, 3].map((i) => records.filter((r) => r.replica === String(i)).length);
    assert.deepEqual(byRecords, await servedByReplica(sims.get('prefix')!.url, 4));
  });

  test('--workers 2: the routing figures are 1 worker\'s (the per-replica caches are in the one index)', { timeout: 240_000 }, async (t) => {
    // Sticky routing depends on the conversation alone, not on the order the two workers' requests come in.
    const one = routing(await run('sticky'));
    const twoResult = await run('sticky', 2);
    const two = routing(twoResult);
    t.diagnostic(`sticky, 2 workers: ${JSON.stringify(two)}`);
    assert.equal(twoResult.prefixCache.model.scope, 'global');
    assert.ok(Math.abs(two.expected_cached_tokens_per_replica / one.expected_cached_tokens_per_replica - 1) <= 0.02, `2 workers ${JSON.stringify(two)}, 1 worker ${JSON.stringify(one)}`);
    assert.ok(Math.abs(two.expected_cached_tokens_one_cache / one.expected_cached_tokens_one_cache - 1) <= 0.02);
    assert.ok(Math.abs(two.lost_to_routing_share! - one.lost_to_routing_share!) <= 0.01);
    const records = readRequestsJsonl(twoResult.files.requests);
    assert.ok(records.every((r) => r.expected_cached_tokens_per_replica != null), 'every record has its per-replica figure from the owner');
  });
});
