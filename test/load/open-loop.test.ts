import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { arrivalScheduleFor } from '../../src/load/executors/open-sessions.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';


describe('open-loop sessions against the simulator', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny' });
  });
  after(async () => {
    await sim.close();
  });

  test('sessions start on the seeded schedule: each first turn records its intended send time', { timeout: 30_000 }, async () => {
    const dir = tempDir('open');
    const result = await runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 30, 2, { prefixWords: 60 }), sessionRate: 20, durationSec: 1, seed: 11, outputDir: dir });
    const records = readRequestsJsonl(result.files.requests);
    const firstTurns = records.filter((r) => r.turn === 1).sort((a, b) => a.conversation_index - b.conversation_index);
    const schedule = arrivalScheduleFor({ arrivals: { ratePerSec: 20, burstiness: 1 }, seed: 11 });
    const expected = Array.from({ length: firstTurns.length }, () => schedule.next());
    assert.ok(firstTurns.length >= 5, `${firstTurns.length} sessions in 1 s`);
    firstTurns.forEach((r, i) => {
      assert.equal(r.conversation_index, i, 'sessions take conversations in dataset order');
      assert.ok(Math.abs(r.scheduled_at_ms! - expected[i]!) < 0.01, `session ${i}: scheduled ${r.scheduled_at_ms} vs ${expected[i]}`);
      assert.ok(r.schedule_lag_ms! >= 0);
      assert.ok(Math.abs(r.e2el_from_scheduled_ms! - (r.e2el_ms + r.schedule_lag_ms!)) < 0.01);
    });
    assert.match(result.load.loadModel, /^open-sessions: 20 sessions\/s \(Poisson\)/);
    assert.equal(result.load.stopReason, 'duration');
    const c = result.load.conversations;
    assert.equal(c.completed + c.failed + c.unfinished + c.not_started, 30);
  });

  test('a --max-concurrency below what the rate needs grows the schedule lag and queue time, and chatload warns', { timeout: 30_000 }, async () => {
    const dir = tempDir('cap');
    const warnings: string[] = [];
    const result = await runBenchmark(
      // Every session runs to its end (no --duration): on a loaded machine a time limit left too few records to compare.
      { url: sim.url, inputFile: writeSyntheticDataset(dir, 16, 1, { prefixWords: 60 }), sessionRate: 40, maxConcurrency: 1, limitMinTokens: 40, limitMaxTokens: 40, outputDir: dir },
      { observer: { onWarning: (m) => warnings.push(m) } },
    );
    const records = readRequestsJsonl(result.files.requests).sort((a, b) => a.scheduled_at_ms! - b.scheduled_at_ms!);
    assert.equal(records.length, 16);
    const half = Math.floor(records.length / 2);
    const early = records.slice(0, half).reduce((a, r) => a + r.queue_ms, 0) / half;
    const late = records.slice(half).reduce((a, r) => a + r.queue_ms, 0) / (records.length - half);
    assert.ok(late > early, `queue time grows: ${early} -> ${late}`);
    // Queue time is part of the lag (timers may wake up to a millisecond early, hence the tolerance).
    assert.ok(records.every((r) => r.schedule_lag_ms! >= r.queue_ms - 1), 'queue time is part of the lag');
    assert.ok(result.summary.metrics.queue_ms!.max > 50);
    assert.ok(warnings.some((w) => /waited for --max-concurrency/.test(w)), warnings.join('\n'));
    assert.ok(result.warnings.some((w) => /schedule lag p99/.test(w)));
  });

  test('the scraped prefix-cache hits equal the usage cached_tokens total; --reset-prefix-cache starts cold', { timeout: 30_000 }, async () => {
    const dir = tempDir('scrape');
    const inputFile = writeSyntheticDataset(dir, 3, 3, { prefixWords: 60 });
    // A first run warms the cache with these conversations.
    await runBenchmark({ url: sim.url, inputFile, earlyStop: false, outputDir: join(dir, 'warm') });
    const warm = await runBenchmark({ url: sim.url, inputFile, earlyStop: false, outputDir: join(dir, 'again'), scrapeMetrics: true, scrapeIntervalSec: 0.2 });
    const cold = await runBenchmark({ url: sim.url, inputFile, earlyStop: false, outputDir: join(dir, 'cold'), scrapeMetrics: true, resetPrefixCache: true });
    for (const run of [warm, cold]) {
      const metrics = run.serverMetrics!;
      assert.equal(metrics.failures, 0);
      assert.equal(metrics.prefix_cache_hits, run.summary.total_cached_tokens, 'server hits = usage cached tokens');
      assert.equal(metrics.prefix_cache_queries, run.summary.total_input_tokens, 'server queries = prompt tokens');
      assert.ok(metrics.series.length >= 2);
    }
    const first = (r: typeof warm): number => readRequestsJsonl(r.files.requests).find((x) => x.conversation_index === 0 && x.turn === 1)!.cached_tokens!;
    assert.ok(first(warm) > 0, 'without a reset the first request hits what the previous run cached');
    assert.equal(first(cold), 0, 'after the reset the first request finds nothing');
  });

  test('goodput counts the requests that met every SLO, overall and per turn', { timeout: 30_000 }, async () => {
    const dir = tempDir('goodput');
    const result = await runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 4, 2, { prefixWords: 60 }), numClients: 2, earlyStop: false, goodput: ['ttft:100000', 'e2el:100000'], outputDir: dir });
    assert.equal(result.summary.goodput!.good_requests, 8);
    assert.equal(result.summary.goodput!.share, 1);
    assert.ok(result.perTurn.every((t) => t.goodput_share === 1));
    const strict = await runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 4, 2, { prefixWords: 60 }), numClients: 2, earlyStop: false, goodput: ['ttft:0.001'], outputDir: join(dir, 'strict') });
    assert.equal(strict.summary.goodput!.good_requests, 0);
    assert.equal(strict.summary.goodput!.request_goodput, 0);
  });
});
