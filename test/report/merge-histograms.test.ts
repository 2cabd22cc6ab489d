import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Command } from 'commander';
import { analyzeRecords } from '../../src/metrics/run-analysis.js';
import { mergeRuns, rebaseRecords } from '../../src/benchmark/merge.js';
import { registerMergeCommand } from '../../src/cli/merge.js';
import { LatencyHistograms } from '../../src/metrics/histogram.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { TurnSummary } from '../../src/metrics/per-turn.js';
import type { Summary } from '../../src/metrics/summary.js';
import { normalizeRunOptions } from '../../src/options/run-options.js';
import { readRequestsJsonl, RequestsJsonlSink } from '../../src/store/requests-jsonl.js';
import { buildResultsDocument, writeJsonAtomic, type ResultsExtra } from '../../src/store/results-json.js';
import { normalizeRecord } from '../../src/store/run-data.js';
import { Rng } from '../../src/util/rng.js';
import { makeFailed, makeRecord } from '../metrics/record-fixtures.js';
import { assertStatsClose } from '../helpers/stats-close.js';
import { tempDir } from '../helpers/tmp.js';

interface ResultsJson {
  summary: Summary;
  warnings: string[];
  merge_mode?: string;
  histograms?: unknown;
  per_turn: TurnSummary[];
  per_conversation: unknown[];
  conversation_stats: unknown;
  warmup_percentages: Record<string, Summary>;
  merged_from: Array<{ records: number; finished: boolean }>;
  conversations: Record<string, number>;
  mean_ttft_ms: number;
  p99_itl_ms: number;
}

const CONFIG = { goodput: ['ttft:150', 'e2el:900'], warmupPercentages: [0, 50] };

/** Records of one shard: its own monotonic clock from 0, wall clock from `startMs`; failures, warmup, cached tokens. */
function shardRecords(seed: number, count: number, startMs: number): RequestRecord[] {
  const rng = new Rng(seed);
  const us = (x: number): number => Math.round(x * 1000) / 1000;
  return Array.from({ length: count }, (_, i) => {
    const sent = us(i * 7.5 + rng.next() * 5);
    const base = { conversation_id: `CONV_ID_${seed}_${i % 9}`, turn: 1 + Math.floor(i / 9), start_time_ms: startMs + sent, sent_at_ms: sent };
    if (i % 13 === 4) return makeFailed('timeout_ttft', { ...base, done_at_ms: us(sent + 50) });
    const gaps = Array.from({ length: rng.int(1, 30) }, () => us(5 + rng.exponential(20)));
    const ttft = us(20 + rng.exponential(100));
    const e2el = us(ttft + gaps.reduce((a, b) => a + b, 0));
    return makeRecord({
      ...base,
      warmup: i % 19 === 0,
      first_token_at_ms: us(sent + ttft),
      done_at_ms: us(sent + e2el),
      ttft_ms: ttft,
      tpot_ms: us((e2el - ttft) / gaps.length),
      itl_ms: gaps,
      e2el_ms: e2el,
      latency_ms: e2el,
      input_num_tokens: rng.int(50, 9_000),
      output_num_tokens: gaps.length + 1,
      cached_tokens: i % 4 === 0 ? null : rng.int(0, 3_000),
      expected_cached_tokens: rng.int(0, 3_000),
    });
  });
}

/** A results folder written with the real writers; `results: false` leaves results.json out (a crashed shard). */
function writeShard(dir: string, records: readonly RequestRecord[], results: 'with-histograms' | 'without-histograms' | false): void {
  mkdirSync(dir, { recursive: true });
  const sink = RequestsJsonlSink.open(join(dir, 'requests.jsonl'));
  for (const r of records) sink.write(r);
  sink.close();
  if (results === false) return;
  const analysis = analyzeRecords(records, normalizeRunOptions(CONFIG));
  writeJsonAtomic(
    join(dir, 'results.json'),
    buildResultsDocument({
      config: CONFIG,
      summary: analysis.summary,
      warmupPercentages: analysis.warmupPercentages,
      perTurn: analysis.perTurn,
      clientHealth: null,
      conversations: { total: 9, completed: 9, failed: 0, dropped: 0, unfinished: 0, not_started: 0 },
      histograms: results === 'with-histograms' ? analysis.histograms : undefined,
      extra: { model: 'test-model', shard: '0/3' } as ResultsExtra,
    }),
  );
}

function readResults(dir: string): ResultsJson {
  return JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as ResultsJson;
}

/** A record as a comparable key-sorted line, so that two files can be compared as multisets of records. */
const canonical = (r: RequestRecord): string => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b))));

const assertClose = assertStatsClose;

describe('chatload merge past --max-records (histogram mode)', () => {
  const root = tempDir('merge-histograms');
  after(() => rmSync(root, { recursive: true, force: true }));
  const t = 1_750_000_000_000;
  const shards = [shardRecords(1, 300, t + 2_000), shardRecords(2, 250, t), shardRecords(3, 120, t + 500)];
  const dirs = shards.map((_, i) => join(root, `shard-${i}`));
  const total = shards.reduce((n, s) => n + s.length, 0);
  // Shard 0 has histograms in results.json, shard 1 an older results.json without them, shard 2 crashed (no results.json).
  before(() => {
    writeShard(dirs[0]!, shards[0]!, 'with-histograms');
    writeShard(dirs[1]!, shards[1]!, 'without-histograms');
    writeShard(dirs[2]!, shards[2]!, false);
    // A torn last line (the shard was killed mid-write) is skipped in both modes.
    appendFileSync(join(dirs[2]!, 'requests.jsonl'), '{"conversation_id":"CONV_ID_3_1","tu');
  });

  test('at or under --max-records the merge is exact, as before', { timeout: 30_000 }, async () => {
    const result = await mergeRuns(dirs, join(root, 'exact'), { maxRecords: total + 1 });
    assert.equal(result.mode, 'exact');
    assert.equal(result.records, total);
    assert.ok(result.files.html !== undefined && existsSync(result.files.html));
    const doc = readResults(result.outputDir);
    const expected = analyzeRecords(rebaseRecords(shards.flat().map(normalizeRecord)), normalizeRunOptions(CONFIG));
    assert.deepEqual(doc.summary, JSON.parse(JSON.stringify(expected.summary)));
    assert.deepEqual(doc.summary.approximate_metrics, []);
    assert.equal(doc.per_turn.length, expected.perTurn.length);
    assert.deepEqual(Object.keys(doc.warmup_percentages), ['0%', '50%']);
    assert.deepEqual(doc.histograms, JSON.parse(JSON.stringify(expected.histograms)));
    // The default limit (a run's exact-analysis limit, 100,000) keeps a small merge exact.
    assert.equal((await mergeRuns(dirs, join(root, 'exact-default'))).mode, 'exact');
  });

  test('above it: counters summed exactly, percentiles within 0.1%, every record rebased into requests.jsonl', { timeout: 30_000 }, async () => {
    const exact = await mergeRuns(dirs, join(root, 'exact-ref'), { maxRecords: total });
    const result = await mergeRuns(dirs, join(root, 'histogram'), { maxRecords: total - 1 });
    assert.equal(result.mode, 'histogram');
    assert.equal(result.records, total);
    assert.ok(result.files.html !== undefined && existsSync(result.files.html), 'the report is written (its charts from a sample)');

    const doc = readResults(result.outputDir);
    const ref = readResults(exact.outputDir);
    const s = doc.summary;
    const e = ref.summary;
    for (const key of [
      'requests', 'completed', 'failed', 'failed_by_kind', 'warmup_excluded', 'error_rate', 'runtime_sec', 'request_throughput',
      'output_throughput', 'total_token_throughput', 'total_input_tokens', 'total_output_tokens', 'total_cached_tokens',
      'total_expected_cached_tokens', 'cached_tokens_known', 'cache_hit_ratio', 'cache_efficiency', 'token_sources', 'goodput',
    ] as const) {
      assert.deepEqual(s[key], e[key], key);
    }
    assert.ok(s.goodput !== null && s.goodput.good_requests > 0);
    for (const metric of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms'] as const) assertClose(s.metrics[metric], e.metrics[metric], metric);
    for (const metric of ['input_num_tokens', 'output_num_tokens', 'cached_tokens'] as const) assertClose(s.metrics[metric], e.metrics[metric], metric);
    assert.deepEqual(s.approximate_metrics, [...Object.keys(e.metrics).filter((m) => e.metrics[m as keyof typeof e.metrics] !== null), 'ttft_by_context']);
    assert.deepEqual(s.ttft_by_context.map((b) => [b.label, b.count]), e.ttft_by_context.map((b) => [b.label, b.count]));
    assert.ok(Math.abs(doc.mean_ttft_ms - ref.mean_ttft_ms) <= 1e-9 * ref.mean_ttft_ms, 'flat vllm keys are there');
    assert.ok(Math.abs(doc.p99_itl_ms - ref.p99_itl_ms) <= 0.001 * ref.p99_itl_ms);

    // What the mode leaves out is said, and the merged histograms are in results.json for a further merge.
    assert.equal(doc.merge_mode, 'histogram');
    assert.deepEqual(
      doc.per_turn.map((t) => [t.turn, t.completed, t.failed, t.cache_hit_ratio, t.goodput_share, t.ttft_ms?.count, t.ttft_ms?.max]),
      ref.per_turn.map((t) => [t.turn, t.completed, t.failed, t.cache_hit_ratio, t.goodput_share, t.ttft_ms?.count, t.ttft_ms?.max]),
    );
    doc.per_turn.forEach((t, i) => assertClose(t.ttft_ms, ref.per_turn[i]!.ttft_ms, `turn ${t.turn} ttft`));
    assert.deepEqual(doc.per_conversation, ref.per_conversation, 'per-conversation figures are exact');
    assert.deepEqual(doc.conversation_stats, ref.conversation_stats);
    // Warmup percentages other than 0% too (the records are streamed once more for them): the cut is exact.
    assert.deepEqual(Object.keys(doc.warmup_percentages), ['0%', '50%']);
    assert.deepEqual(doc.warmup_percentages['0%'], s);
    const [half, refHalf] = [doc.warmup_percentages['50%']!, ref.warmup_percentages['50%']!];
    assert.ok(half.warmup_excluded > s.warmup_excluded, 'the 50% cut dropped records');
    for (const key of ['requests', 'completed', 'failed', 'warmup_excluded', 'runtime_sec', 'total_input_tokens', 'total_cached_tokens', 'goodput'] as const) {
      assert.deepEqual(half[key], refHalf[key], `50%: ${key}`);
    }
    for (const metric of ['ttft_ms', 'itl_ms', 'input_num_tokens'] as const) assertClose(half.metrics[metric], refHalf.metrics[metric], `50%: ${metric}`);
    assert.ok(doc.warnings.some((w) => /report\.html draws its charts from a uniform sample/.test(w)));
    assert.ok(doc.warnings.some((w) => /1 of the merged runs did not finish/.test(w)));
    assert.deepEqual(doc.merged_from.map((r) => [r.records, r.finished]), [[300, true], [250, true], [120, false]]);
    assert.deepEqual(doc.conversations, ref.conversations);
    assert.deepEqual(LatencyHistograms.fromJSON(doc.histograms).counts(), LatencyHistograms.fromJSON(ref.histograms).counts());

    // Every line, rebased onto the same clock as the exact merge (which sorts them; this one keeps file order).
    const lines = readRequestsJsonl(result.files.requests);
    assert.equal(lines.length, total);
    assert.deepEqual(lines.map(canonical).sort(), readRequestsJsonl(exact.files.requests).map(canonical).sort());
    assert.equal(Math.min(...lines.map((r) => r.sent_at_ms)), 0);
    assert.deepEqual(lines.slice(0, 3).map((r) => r.conversation_id), shards[0]!.slice(0, 3).map((r) => r.conversation_id), 'file order');

    // Merging the merged folder again (its results.json has histograms) keeps the statistics.
    const again = await mergeRuns([result.outputDir], join(root, 'histogram-again'), { maxRecords: 1 });
    const againDoc = readResults(again.outputDir);
    assert.deepEqual(againDoc.summary.metrics, s.metrics);
  });

  test('the statistics come from the records, whatever histograms results.json holds', { timeout: 30_000 }, async () => {
    const dir = join(root, 'stale');
    writeShard(dir, shards[0]!, 'with-histograms');
    appendFileSync(join(dir, 'requests.jsonl'), `${JSON.stringify(makeRecord({ start_time_ms: t, ttft_ms: 99_999 }))}\n`);
    const result = await mergeRuns([dir], join(root, 'stale-merged'), { maxRecords: 1 });
    const doc = readResults(result.outputDir);
    assert.equal(doc.summary.metrics.ttft_ms!.max, 99_999);
    assert.equal(doc.summary.metrics.ttft_ms!.count, doc.summary.completed);
  });

  test('the CLI takes --max-records', { timeout: 30_000 }, async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => {} });
    registerMergeCommand(program);
    const out = join(root, 'cli');
    const write = process.stdout.write;
    let printed = '';
    // Only the command's line is caught: the test runner's own output goes through untouched.
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
      typeof chunk === 'string' && chunk.startsWith('merged ') ? ((printed += chunk), true) : write.call(process.stdout, chunk, ...rest)) as typeof process.stdout.write;
    try {
      await program.parseAsync(['merge', dirs[0]!, dirs[1]!, '-o', out, '--max-records', '10'], { from: 'user' });
    } finally {
      process.stdout.write = write;
    }
    assert.match(printed, /merged 550 records from 2 runs .*histogram mode/);
    assert.equal(readResults(out).merge_mode, 'histogram');
    await assert.rejects(program.parseAsync(['merge', dirs[0]!, '-o', out, '--max-records', 'x'], { from: 'user' }));
  });
});
