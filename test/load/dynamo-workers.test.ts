// NVIDIA Dynamo's frontend names the worker that served each request in the response body, only when the request asks
// (client/dynamo-worker.ts, docs/ENGINES.md "Replica headers"), and sends no replica header. Against the test router in
// its Dynamo mode (test/helpers/replica-router-server.ts, 4 workers, round-robin), over loopback: chatload detects the
// frontend from its /metrics names, asks every request for the worker (merged into what --extra-body sends), names each
// record's replica by the worker's exact u64 id, and builds the per-replica figures from them as it does from a header.
// Against a server that is not Dynamo it asks nothing. Dynamo leaves prompt_tokens_details out of a usage with 0
// cached tokens: those read as 0 (a miss), not unknown; when no answer carries any, a warning says they may be unknown.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import type { ReplicaRow, RoutingLoss } from '../../src/metrics/replica-types.js';
import type { RunOptionsInput } from '../../src/options/run-options.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { syntheticConversations, writeDataset } from '../helpers/datasets.js';
import { DYNAMO_WORKER_IDS, startReplicaRouter, type ReplicaRouterOptions, type ReplicaRouterServer } from '../helpers/replica-router-server.js';
import { tempDir } from '../helpers/tmp.js';

interface Results {
  engine: { name: string; detected_by: string[] };
  warnings: string[];
  summary: { completed: number; cached_tokens_known: number; total_cached_tokens: number };
  replicas: ReplicaRow[] | null;
  prefix_cache: { routing?: RoutingLoss; model: { semantics: { block_size: number; sources: string[] } } };
}

/**
 * 8 conversations of 4 turns with 2 clients against a fresh router; the results, the records and what it was sent.
 * `extra`: more options, or a function of the router's URL that gives them (its pages).
 */
async function runAgainst(label: string, router: ReplicaRouterOptions, extra: RunOptionsInput | ((url: string) => RunOptionsInput) = {}) {
  const dir = tempDir(`dynamo-${label}`);
  const server: ReplicaRouterServer = await startReplicaRouter(router);
  try {
    const inputFile = writeDataset(dir, syntheticConversations({ count: 8, userTurns: () => 4, prefixWords: 200 }));
    const more = typeof extra === 'function' ? extra(server.url) : extra;
    const result = await runBenchmark({ url: server.url, inputFile, numClients: 2, earlyStop: false, outputDir: join(dir, 'out'), ...more });
    const results = JSON.parse(readFileSync(result.files.results, 'utf8')) as Results;
    return { server, results, records: await readRequestsJsonl(result.files.requests) };
  } finally {
    await server.close();
  }
}

describe("NVIDIA Dynamo's workers named in the body", () => {
  test('detected from /metrics; every request asks for its worker; records and replica rows name the exact worker ids', async () => {
    const { server, results, records } = await runAgainst('workers', { replicas: 4, routing: 'round-robin', dynamo: true });
    assert.equal(results.engine.name, 'dynamo');
    assert.ok(results.engine.detected_by.includes('GET /metrics: dynamo_frontend_* names'), results.engine.detected_by.join('; '));
    assert.equal(server.routed.length, records.length);
    for (const { nvext } of server.routed) assert.deepEqual(nvext, { extra_fields: ['worker_id'] });
    // Each record names the worker that served it, by its id's exact digits (a JS number would round them) and rank.
    const names = DYNAMO_WORKER_IDS.map((id) => `${id} dp 0`);
    const served = new Map<string, number>();
    for (const r of records) served.set(String(r.replica), (served.get(String(r.replica)) ?? 0) + 1);
    assert.deepEqual([...served.keys()].sort(), [...names].sort());
    const rows = results.replicas!;
    assert.equal(rows.length, 4);
    for (const row of rows) {
      const truth = server.replicas[names.indexOf(row.replica)]!;
      assert.ok(truth !== undefined, `row ${row.replica} is one of the workers`);
      assert.equal(row.requests, truth.requests);
      assert.equal(row.requests, served.get(row.replica));
      assert.equal(row.cached_tokens, truth.cachedTokens);
    }
    // Round-robin scatters each conversation over the workers: the one ideal cache hits its history, the workers' do not.
    const routing = results.prefix_cache.routing!;
    assert.equal(routing.replicas, 4);
    assert.ok(routing.lost_to_routing_tokens > 0, JSON.stringify(routing));
    assert.ok(routing.sessions_split > 0);
    // Turn 1 of each conversation hits nothing, and Dynamo said nothing of it: 0, counted, not unknown.
    const cold = records.filter((r) => r.turn === 1);
    assert.ok(cold.length > 0 && cold.every((r) => r.cached_tokens === 0), JSON.stringify(cold.map((r) => r.cached_tokens)));
    assert.ok(records.every((r) => typeof r.cached_tokens === 'number'));
    assert.equal(results.summary.cached_tokens_known, results.summary.completed);
    assert.equal(results.summary.total_cached_tokens, server.replicas.reduce((sum, t) => sum + t.cachedTokens, 0));
    assert.ok(results.summary.total_cached_tokens > 0);
    assert.ok(!results.warnings.some((w) => /prompt_tokens_details/.test(w)), results.warnings.join(' | '));
    // The frontend's page states its workers' block size.
    const { semantics } = results.prefix_cache.model;
    assert.equal(semantics.block_size, 16);
    assert.ok(semantics.sources.includes('block_size: dynamo_frontend_model_kv_cache_block_size'), semantics.sources.join('; '));
  });

  test("--extra-body's own nvext is kept, worker_id added to its extra_fields", async () => {
    const extraBody = { nvext: { extra_fields: ['timing'], agent_hints: { osl: 8 } }, top_k: 5 };
    const { server, records } = await runAgainst('extra-body', { replicas: 2, routing: 'sticky', dynamo: true }, { extraBody });
    assert.ok(server.routed.length > 0);
    for (const { nvext } of server.routed) assert.deepEqual(nvext, { extra_fields: ['timing', 'worker_id'], agent_hints: { osl: 8 } });
    assert.ok(records.every((r) => typeof r.replica === 'string' && r.replica.endsWith(' dp 0')));
  });

  test('with --workers 2 each thread asks and reads the same', async () => {
    const { server, results, records } = await runAgainst('threads', { replicas: 4, routing: 'round-robin', dynamo: true }, { workers: 2 });
    assert.ok(server.routed.length > 0);
    for (const { nvext } of server.routed) assert.deepEqual(nvext, { extra_fields: ['worker_id'] });
    const names = new Set(DYNAMO_WORKER_IDS.map((id) => `${id} dp 0`));
    assert.ok(records.every((r) => names.has(String(r.replica)) && typeof r.cached_tokens === 'number'));
    assert.equal(results.replicas!.length, 4);
    assert.equal(results.summary.total_cached_tokens, server.replicas.reduce((sum, t) => sum + t.cachedTokens, 0));
  });

  test("with --scrape-metrics on the workers' own pages: the engine is theirs (vLLM), Dynamo in front is still detected and asked", async () => {
    const pages = (url: string): RunOptionsInput => ({ scrapeMetrics: [0, 1].map((i) => `${url}/replicas/${i}/metrics`), scrapeIntervalSec: 0.2 });
    const { server, results, records } = await runAgainst('worker-pages', { replicas: 2, routing: 'round-robin', dynamo: true, kvBlocks: 500 }, pages);
    assert.equal(results.engine.name, 'vllm');
    assert.ok(results.engine.detected_by.some((e) => e.startsWith("in front: NVIDIA Dynamo's frontend")), results.engine.detected_by.join('; '));
    for (const { nvext } of server.routed) assert.deepEqual(nvext, { extra_fields: ['worker_id'] });
    const names = new Set(DYNAMO_WORKER_IDS.slice(0, 2).map((id) => `${id} dp 0`));
    assert.ok(records.every((r) => names.has(String(r.replica)) && typeof r.cached_tokens === 'number'));
    // The workers' pages give the vLLM semantics the frontend does not state.
    assert.ok(results.prefix_cache.model.semantics.sources.some((s) => s.includes('vllm:cache_config_info')), results.prefix_cache.model.semantics.sources.join('; '));
  });

  test('workers that report no cached tokens: every answer reads 0, and a warning says they may be unknown', async () => {
    const { results, records } = await runAgainst('no-counts', { replicas: 2, routing: 'sticky', dynamo: true, dynamoCounts: false });
    assert.ok(records.every((r) => r.cached_tokens === 0));
    assert.ok(results.warnings.some((w) => /no answer from NVIDIA Dynamo carried prompt_tokens_details/.test(w)), results.warnings.join(' | '));
  });

  test("its Responses API: the worker read from a whole body's nvext; no usage, so a warning says the cached tokens are unknown", async () => {
    const { server, results, records } = await runAgainst('responses', { replicas: 4, routing: 'round-robin', dynamo: true }, { endpoint: 'responses', stream: false });
    assert.ok(server.routed.every((r) => ((r.nvext as { extra_fields?: unknown } | undefined)?.extra_fields as unknown[] | undefined)?.includes('worker_id')), 'every request asked');
    assert.equal(records.length, 32);
    // Round-robin over 4 workers: each record names the worker that served, by its exact id.
    assert.deepEqual(
      records.map((r) => r.replica),
      server.routed.map((r) => `${DYNAMO_WORKER_IDS[r.replica]} dp 0`),
    );
    assert.ok(records.every((r) => r.cached_tokens === null), 'no usage: unknown, not 0');
    assert.ok(results.warnings.some((w) => /no answer from NVIDIA Dynamo carried a usage/.test(w)), results.warnings.join(' | '));
  });

  test('its Responses API streamed: no worker and no usage, and the same warning', async () => {
    const { results, records } = await runAgainst('responses-stream', { replicas: 2, routing: 'round-robin', dynamo: true }, { endpoint: 'responses' });
    assert.equal(records.length, 32);
    assert.ok(records.every((r) => r.status === 'ok' && r.replica === null && r.cached_tokens === null));
    assert.ok(results.warnings.some((w) => /no answer from NVIDIA Dynamo carried a usage/.test(w)), results.warnings.join(' | '));
  });

  test('a server that is not Dynamo is asked nothing of the kind', async () => {
    const { server, results, records } = await runAgainst('not-dynamo', { replicas: 2, routing: 'round-robin' });
    assert.notEqual(results.engine.name, 'dynamo');
    assert.ok(server.routed.length > 0);
    for (const { nvext } of server.routed) assert.equal(nvext, undefined);
    // Its header named the replicas, as before.
    assert.deepEqual([...new Set(records.map((r) => r.replica))].sort(), ['0', '1']);
  });
});
