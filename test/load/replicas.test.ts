// Per-replica truth and the loss to routing (issue #31, parts 2 and 3), against a test router fronting 4 replicas
// (test/helpers/replica-router-server.ts): each record names the replica its response header named, results.json's
// replicas match the replicas' own counts, the expected-cache model's one-cache against per-replica figures follow the
// routing (round-robin scatters sessions, sticky keeps them), 4 pages of --scrape-metrics give per-replica totals by
// counter deltas, a hostile header value is bounded and escaped, and a merge rebuilds the same replicas table.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { mergeRuns } from '../../src/benchmark/merge.js';
import type { ReplicaRow, RoutingLoss } from '../../src/metrics/replica-tally.js';
import type { RunOptionsInput } from '../../src/options/run-options.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { loadRunData } from '../../src/store/run-data.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { formatSummary } from '../../src/report/terminal.js';
import { syntheticConversations, writeDataset } from '../helpers/datasets.js';
import { startReplicaRouter, type ReplicaRouterOptions, type ReplicaRouterServer } from '../helpers/replica-router-server.js';
import { tempDir } from '../helpers/tmp.js';

interface Ran {
  server: ReplicaRouterServer;
  dir: string;
  results: {
    replicas: ReplicaRow[] | null;
    prefix_cache: { routing?: RoutingLoss; comparable?: boolean; model: { capacity_tokens: number | null; capacity_source: string | null; replica_capacity_tokens?: number } };
  };
  records: Awaited<ReturnType<typeof readRequestsJsonl>>;
  text: string;
}

/** 8 conversations of 4 turns, each with its own 200-word opening, run with 2 clients against a fresh router. */
async function runBehind(label: string, router: ReplicaRouterOptions, extra: (server: ReplicaRouterServer) => RunOptionsInput = () => ({})): Promise<Ran> {
  const dir = tempDir(`replicas-${label}`);
  const server = await startReplicaRouter(router);
  try {
    const inputFile = writeDataset(dir, syntheticConversations({ count: 8, userTurns: () => 4, prefixWords: 200 }));
    const result = await runBenchmark({ url: server.url, inputFile, numClients: 2, earlyStop: false, outputDir: join(dir, 'out'), ...extra(server) });
    const results = JSON.parse(readFileSync(result.files.results, 'utf8')) as Ran['results'];
    const records = await readRequestsJsonl(result.files.requests);
    const text = formatSummary({ summary: result.summary, perTurn: result.perTurn, clientHealth: null, prefixCache: result.prefixCache, replicas: result.replicas }, { color: false });
    return { server, dir, results, records, text };
  } finally {
    await server.close();
  }
}

describe('replicas behind a router', () => {
  test('records name the replica; results.json replicas match the replicas\' own counts', async () => {
    const { server, results, records, text } = await runBehind('truth', { replicas: 4, routing: 'round-robin' });
    assert.equal(records.length, server.routed.length);
    const byReplica = new Map<string, number>();
    for (const r of records) byReplica.set(String(r.replica), (byReplica.get(String(r.replica)) ?? 0) + 1);
    const rows = results.replicas!;
    assert.equal(rows.length, 4);
    for (const row of rows) {
      const truth = server.replicas[Number(row.replica)]!;
      assert.equal(row.source, 'header');
      assert.equal(row.requests, truth.requests);
      assert.equal(row.requests, byReplica.get(row.replica));
      assert.equal(row.input_tokens, truth.promptTokens);
      assert.equal(row.cached_tokens, truth.cachedTokens);
      assert.equal(row.hit_ratio, truth.cachedTokens / truth.promptTokens);
      assert.ok(row.expected_cached_tokens !== null);
      // Cached (the server's tokens) against expected (the model's) only where the run's own efficiency is comparable.
      assert.equal(row.efficiency === null, results.prefix_cache.comparable === false);
    }
    assert.match(text, /replicas \(from each response's replica header\)/);
    assert.match(text, /routing\s+lost/);
  });

  test('round-robin loses much of the one-cache expectation and scatters sessions; sticky loses almost none', async () => {
    const rr = await runBehind('rr', { replicas: 4, routing: 'round-robin' });
    const sticky = await runBehind('sticky', { replicas: 4, routing: 'sticky' });
    const a = rr.results.prefix_cache.routing!;
    const b = sticky.results.prefix_cache.routing!;
    // The replicas' own caches say the same: round-robin served fewer cached tokens than sticky.
    const served = (s: ReplicaRouterServer): number => s.replicas.reduce((sum, r) => sum + r.cachedTokens, 0);
    assert.ok(served(rr.server) < served(sticky.server));
    assert.ok(a.expected_cached_tokens_one_cache > 0 && b.expected_cached_tokens_one_cache > 0);
    assert.ok(a.lost_to_routing_share! > 0.2, `round-robin lost ${a.lost_to_routing_share}`);
    assert.ok(b.lost_to_routing_share! <= 0.02, `sticky lost ${b.lost_to_routing_share}`);
    assert.equal(a.lost_to_routing_tokens, a.expected_cached_tokens_one_cache - a.expected_cached_tokens_per_replica);
    // Sessions split: counted from the router's own log, a session being its first message.
    const truthSplit = (s: ReplicaRouterServer): number => {
      const seen = new Map<string, Set<number>>();
      for (const { replica, first } of s.routed) seen.set(first, (seen.get(first) ?? new Set()).add(replica));
      return [...seen.values()].filter((set) => set.size > 1).length;
    };
    assert.equal(a.sessions_split, truthSplit(rr.server));
    assert.ok(a.sessions_split > 0);
    assert.equal(b.sessions_split, 0);
    assert.equal(a.sessions, 8);
  });

  test('--scrape-metrics given 4 times (and a GPU page), no header: per-replica totals by counter deltas, the fleet\'s KV capacity', async () => {
    // A GPU exporter's page among them is read, and is no replica.
    const pages = (s: ReplicaRouterServer): RunOptionsInput => ({ scrapeMetrics: [...[0, 1, 2, 3].map((i) => `${s.url}/replicas/${i}/metrics`), `${s.url}/gpu/metrics`], scrapeIntervalSec: 0.2 });
    const { server, results, records } = await runBehind('pages', { replicas: 4, routing: 'round-robin', header: false, kvBlocks: 300 }, pages);
    // Each page states one replica's capacity: the one ideal cache holds the four's, each replica's cache one page's.
    const model = results.prefix_cache.model;
    assert.equal(model.capacity_tokens, 4 * 300 * 16);
    assert.equal(model.replica_capacity_tokens, 300 * 16);
    assert.equal(model.capacity_source, 'vllm:cache_config_info, summed over 4 --scrape-metrics pages');
    assert.ok(records.every((r) => r.replica === null));
    const rows = results.replicas!;
    assert.equal(rows.length, 4);
    rows.forEach((row, i) => {
      const truth = server.replicas[i]!;
      assert.equal(row.source, 'metrics');
      assert.equal(row.replica, `${server.url}/replicas/${i}/metrics`);
      assert.equal(row.requests, truth.requests);
      assert.equal(row.input_tokens, truth.promptTokens);
      assert.equal(row.cached_tokens, truth.cachedTokens);
      assert.equal(row.expected_cached_tokens, null);
    });
    assert.equal(results.prefix_cache.routing, undefined);
  });

  test('with --workers 2 the threads\' tallies merge into the same truth', async () => {
    const { server, results } = await runBehind('workers', { replicas: 4, routing: 'round-robin' }, () => ({ workers: 2 }));
    for (const row of results.replicas!) {
      const truth = server.replicas[Number(row.replica)]!;
      assert.equal(row.requests, truth.requests);
      assert.equal(row.cached_tokens, truth.cachedTokens);
    }
    const routing = results.prefix_cache.routing!;
    assert.equal(routing.sessions, 8);
    assert.ok(routing.expected_cached_tokens_per_replica > 0);
  });

  test('a hostile replica header (control characters, 10 KB) is bounded and escaped', async () => {
    const hostile = (i: number): string => `\x9b31m${'x'.repeat(10_000)}${i}`;
    const { records, text } = await runBehind('hostile', { replicas: 2, routing: 'round-robin', name: hostile });
    for (const r of records) {
      assert.ok(typeof r.replica === 'string' && r.replica.length <= 128 * 4, `replica of ${r.replica?.length} characters`);
      // eslint-disable-next-line no-control-regex -- control characters are what this looks for
      assert.doesNotMatch(r.replica!, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
    // eslint-disable-next-line no-control-regex -- control characters are what this looks for
    assert.doesNotMatch(text, /[\u0080-\u009f\u001b]/);
  });

  test('a merge and the report rebuild the same replicas table and routing figures, an unfinished run from its records', async () => {
    const ran = await runBehind('merge', { replicas: 4, routing: 'round-robin' });
    const merged = await mergeRuns([join(ran.dir, 'out')], join(ran.dir, 'merged'));
    const doc = JSON.parse(readFileSync(merged.files.results, 'utf8')) as Ran['results'];
    assert.deepEqual(doc.replicas, ran.results.replicas);
    assert.deepEqual(doc.prefix_cache.routing, ran.results.prefix_cache.routing);
    // Inside the merged prefix_cache, beside its totals and model (not a prefix_cache of routing alone).
    const mergedPrefix = doc.prefix_cache as { totals?: unknown; model?: unknown };
    assert.ok(mergedPrefix.totals !== undefined && mergedPrefix.model !== undefined);
    // The report reads them back (through the one results reader); a run that never wrote results.json has them
    // rebuilt from its records.
    const data = await loadRunData(join(ran.dir, 'out'));
    assert.deepEqual(data.replicas, ran.results.replicas);
    assert.deepEqual(data.routing, ran.results.prefix_cache.routing);
    const mergedData = await loadRunData(join(ran.dir, 'merged'));
    assert.deepEqual(mergedData.routing, ran.results.prefix_cache.routing);
    assert.deepEqual(mergedData.replicas, ran.results.replicas);
    rmSync(join(ran.dir, 'out', 'results.json'));
    const unfinished = await loadRunData(join(ran.dir, 'out'));
    assert.equal(unfinished.finished, false);
    assert.deepEqual(unfinished.replicas?.map((r) => [r.replica, r.requests, r.cached_tokens]), ran.results.replicas!.map((r) => [r.replica, r.requests, r.cached_tokens]));
    assert.deepEqual(unfinished.routing, ran.results.prefix_cache.routing);
    const html = renderHtmlReport(data);
    assert.match(html, /<section id="replicas"><h2>Replicas<\/h2>/);
  });
});
