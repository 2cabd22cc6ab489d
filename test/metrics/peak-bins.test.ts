import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PeakBins } from '../../src/metrics/peak-bins.js';
import { RunAggregate } from '../../src/metrics/run-aggregate.js';
import { buildResultsDocument, type ResultsExtra } from '../../src/store/results-json.js';
import { analyzeRecords } from '../../src/metrics/run-analysis.js';
import { makeRecord } from './record-fixtures.js';
import { planRun } from '../../src/options/run-plan.js';

/** A record sent at `sent` s, done at `done` s, whose `tokens` tokens came in `chunks` chunks evenly from `first` s. */
function rec(sent: number, done: number, first: number, tokens: number, chunks: number) {
  const gap = chunks > 1 ? ((done - first) * 1000) / (chunks - 1) : 0;
  return makeRecord({
    sent_at_ms: sent * 1000,
    done_at_ms: done * 1000,
    first_token_at_ms: first * 1000,
    output_num_tokens: tokens,
    itl_ms: new Array<number>(Math.max(0, chunks - 1)).fill(gap),
  });
}

describe('PeakBins (max_output_tokens_per_s, max_concurrent_requests)', () => {
  test('bins output tokens by chunk arrival and requests by the seconds they span', () => {
    const bins = new PeakBins();
    // A: 4 chunks of 2 tokens at 0.1, 0.43, 0.77, 1.1 s (6 tokens in second 0, 2 in second 1); B: 3 tokens in
    // second 2; C: 5 tokens in one chunk at 1.5 s. Second 1 has 2 + 5 = 7 tokens and A, B and C in flight.
    bins.add(rec(0, 1.1, 0.1, 8, 4));
    bins.add(rec(0.5, 2.5, 2.1, 3, 3));
    bins.add(rec(1.2, 1.8, 1.5, 5, 1));
    assert.deepEqual(bins.peaks(), { max_output_tokens_per_s: 7, max_concurrent_requests: 3 });
  });

  test('merging parts equals adding everything to one, and survives JSON', () => {
    const records = [rec(0, 3, 1, 30, 10), rec(2, 4, 2.5, 12, 6), rec(5, 6, 5.2, 4, 2), rec(0.2, 0.4, 0.3, 1, 1)];
    const whole = new PeakBins();
    for (const r of records) whole.add(r);
    const a = new PeakBins();
    const b = new PeakBins();
    records.forEach((r, i) => (i % 2 === 0 ? a : b).add(r));
    const merged = PeakBins.fromJSON(JSON.parse(JSON.stringify(b.toJSON()))).merge(PeakBins.fromJSON(JSON.parse(JSON.stringify(a.toJSON()))));
    assert.deepEqual(merged.peaks(), whole.peaks());
    assert.deepEqual(new PeakBins().peaks(), { max_output_tokens_per_s: 0, max_concurrent_requests: 0 });
  });

  test('results.json carries them, and request_goodput only with --goodput, as vllm bench serve', () => {
    const records = [rec(0, 1.5, 0.5, 10, 5), rec(0.5, 1.2, 0.6, 4, 2), { ...rec(0, 0.1, 0.05, 1, 1), warmup: true }];
    const base = { config: {}, perTurn: [], clientHealth: null, conversations: null, warmupPercentages: {}, extra: {} as ResultsExtra };
    const plain = analyzeRecords(records, { warmupPercentages: [0] });
    const doc = buildResultsDocument({ ...base, summary: plain.summary, peaks: plain.peaks });
    assert.equal(doc.max_concurrent_requests, 2, 'the warmup record is left out');
    // Chunks at 0.5, 0.75 | 1.0, 1.25, 1.5 s (2 tokens each) and 0.6 | 1.2 s (2 each): 6 tokens in second 0, 8 in second 1.
    assert.equal(doc.max_output_tokens_per_s, 8);
    assert.equal('request_goodput' in doc, false);
    const slo = analyzeRecords(records, { goodput: { ttft_ms: 1_000_000 }, warmupPercentages: [0] });
    const withGoodput = buildResultsDocument({ ...base, summary: slo.summary, peaks: slo.peaks });
    assert.equal(withGoodput.request_goodput, slo.summary.goodput!.request_goodput);
    assert.ok((withGoodput.request_goodput as number) > 0);
    assert.deepEqual(RunAggregate.fromJSON(JSON.parse(JSON.stringify(RunAggregate.fromRecords(records).toJSON()))).peaks(), plain.peaks);
  });
});

describe('--percentile-metrics and --metric-percentiles (vllm bench serve)', () => {
  test('the asked percentiles of the asked metrics become flat keys p<N>_<metric>_ms; the fixed ones are not duplicated', () => {
    const plan = planRun({ metricPercentiles: [95, 99, 99.5], percentileMetrics: ['ttft', 'e2el'] });
    assert.deepEqual(plan.summary.metricPercentiles, [95, 99, 99.5]);
    const records = Array.from({ length: 200 }, (_, i) => rec(i * 0.01, i * 0.01 + 0.5 + i / 1000, i * 0.01 + 0.1 + i / 2000, 5, 5));
    const analysis = analyzeRecords(records, plan.summary);
    const ttft = analysis.summary.metrics.ttft_ms!;
    assert.deepEqual(Object.keys(ttft.percentiles ?? {}), ['95', '99.5'], 'p99 is a fixed field already');
    const doc = buildResultsDocument({ config: {}, perTurn: [], clientHealth: null, conversations: null, warmupPercentages: {}, extra: {} as ResultsExtra, summary: analysis.summary, percentileMetrics: plan.summary.percentileMetrics });
    const sorted = records.map((r) => r.ttft_ms!).sort((a, b) => a - b);
    // numpy's linear method by hand: rank 0.95 * 199 = 189.05.
    assert.ok(Math.abs((doc['p95_ttft_ms'] as number) - (sorted[189]! + 0.05 * (sorted[190]! - sorted[189]!))) < 1e-9);
    assert.equal(typeof doc['p99.5_e2el_ms'], 'number');
    assert.equal('p95_tpot_ms' in doc, false, 'tpot was not asked for');
    assert.equal(doc.p99_ttft_ms, ttft.p99);
    assert.deepEqual(analyzeRecords(records, planRun({}).summary).summary.metrics.ttft_ms!.percentiles, undefined, 'the default adds nothing');
  });

  test('bad values are one-line errors naming the flag', () => {
    assert.throws(() => planRun({ metricPercentiles: [0] }), /--metric-percentiles: expected percentiles in \(0, 100\]/);
    assert.throws(() => planRun({ percentileMetrics: ['ttft', 'latency' as 'ttft'] }), /--percentile-metrics: expected ttft, tpot, itl or e2el/);
  });
});
