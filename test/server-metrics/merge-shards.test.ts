// Two shards run at the same time against one simulator, each scraping its /metrics page, then `chatload merge`:
// the merged results.json's server_metrics must equal what the merged records say the server did (the simulator's
// prefix-cache queries and prompt tokens are its requests' input tokens, its hits their cached tokens), where each
// shard's own delta also counts the other shard's overlapping traffic.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { mergeRuns } from '../../src/benchmark/merge.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import type { ResultsServerMetrics } from '../../src/store/results-document.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { runCli } from '../helpers/cli.js';
import { syntheticConversations, writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

describe('merge: the server counters of shards that scraped one server', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny' });
  });
  after(async () => {
    await sim.close();
  });

  test('the merged window counts each request once; the shards overlapped, so their deltas summed count some twice', { timeout: 90_000 }, async () => {
    const dir = tempDir('merge-server');
    const shard = (i: number) =>
      runBenchmark({
        url: sim.url,
        inputFile: writeDataset(dir, syntheticConversations({ count: 6, userTurns: () => 3, prefixWords: 80 + 40 * i }), `in-${i}.json`),
        numClients: 3,
        earlyStop: false,
        scrapeMetrics: true,
        scrapeIntervalSec: 0.1,
        outputDir: join(dir, `shard-${i}`),
      });
    const shards = await Promise.all([shard(0), shard(1)]);
    const merged = await mergeRuns(
      shards.map((s) => s.outputDir),
      join(dir, 'merged'),
    );
    const doc = JSON.parse(readFileSync(merged.files.results, 'utf8')) as { server_metrics: ResultsServerMetrics | null; warnings: string[] };
    const records = readRequestsJsonl(merged.files.requests);
    const sum = (f: (r: (typeof records)[number]) => number | null): number => records.reduce((n, r) => n + (f(r) ?? 0), 0);
    const server = doc.server_metrics!;
    assert.ok(server !== null, doc.warnings.join('\n'));
    assert.equal(server.prefix_cache_queries, sum((r) => r.input_num_tokens), 'queries = the merged records\' input tokens');
    assert.equal(server.prompt_tokens, sum((r) => r.input_num_tokens));
    assert.equal(server.prefix_cache_hits, sum((r) => r.cached_tokens), 'hits = their cached tokens');
    assert.equal(server.generation_tokens, sum((r) => r.output_num_tokens));
    assert.equal(server.requests, records.length);
    assert.equal(server.cache_hit_rates.server_counters, server.cache_hit_rates.response_usage);
    assert.deepEqual(merged.cacheHitRates, server.cache_hit_rates);
    const own = shards.map((s) => s.serverMetrics!.prefix_cache_queries!);
    assert.ok(own[0]! + own[1]! > server.prefix_cache_queries!, `the shards overlapped: ${own.join(' + ')} against ${server.prefix_cache_queries}`);
    assert.equal(server.series.length, shards[0]!.serverMetrics!.series.length + shards[1]!.serverMetrics!.series.length);
    assert.ok(server.series.every((s, i, all) => i === 0 || all[i - 1]!.t_ms <= s.t_ms), 'one clock, in time order');
    assert.deepEqual(doc.warnings, []);

    // The command says it, and says what it left out: a shard that scraped another page.
    const cli = await runCli(['merge', join(dir, 'shard-0'), join(dir, 'shard-1'), '-o', join(dir, 'merged-cli')], { timeoutMs: 60_000 });
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^server cache: hit rate \d+\.\d% by its \/metrics counters \| \d+\.\d% by usage \| \d+\.\d% possible by the history, over the merged runs' windows$/m);
    assert.equal(cli.stderr, '');
  });
});
