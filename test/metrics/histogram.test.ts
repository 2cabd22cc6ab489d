import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as hdr from 'hdr-histogram-js';
import { LatencyHistogram, LatencyHistograms } from '../../src/metrics/histogram.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { describe as describeStats } from '../../src/metrics/stats.js';
import { RunAggregate } from '../../src/metrics/run-aggregate.js';
import { summarize, summarizeWarmupPercentages } from '../../src/metrics/summary.js';
import { Rng } from '../../src/util/rng.js';
import { assertStatsClose, STATS_PERCENTILES } from '../helpers/stats-close.js';
import { makeFailed, makeRecord } from './record-fixtures.js';

const PERCENTILES = STATS_PERCENTILES;
const assertClose = assertStatsClose;

/** A lognormal latency sample (ms), rounded to microseconds as chatload's records are. */
function lognormalMs(rng: Rng, medianMs: number, sigma: number): number {
  const normal = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  return Math.round(medianMs * Math.exp(sigma * normal) * 1000) / 1000;
}

function histogramOf(values: readonly number[]): LatencyHistogram {
  const h = new LatencyHistogram();
  h.recordMany(values);
  return h;
}

describe('LatencyHistogram', () => {
  test('matches describe() on random data: percentiles within 0.1%, count/mean/std/min/max exact', () => {
    const rng = new Rng(7);
    const datasets: Record<string, number[]> = {
      // From tens of microseconds to a minute: every bucket width the HDR layout has in that range.
      lognormal: Array.from({ length: 20_000 }, () => lognormalMs(rng, 40, 2)),
      // Unrounded doubles from 1 ms up: the microsecond rounding adds to the bucket error and stays under 0.1%.
      uniform: Array.from({ length: 5_000 }, () => 1 + rng.next() * 5_000),
      // Many equal values and a long tail.
      ties: Array.from({ length: 3_000 }, (_, i) => (i % 10 === 0 ? 1000 + rng.int(0, 100_000) / 7 : 12.5)),
      small: [3.25],
      pair: [2, 4096.5],
    };
    for (const [name, values] of Object.entries(datasets)) {
      assertClose(histogramOf(values).stats(), describeStats(values), name);
    }
  });

  test('empty, zero, negative, sub-microsecond, non-finite and very large values', () => {
    const empty = new LatencyHistogram();
    assert.equal(empty.stats(), null);
    assert.equal(empty.count, 0);
    assert.deepEqual(LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(empty))).stats(), null);

    const h = histogramOf([0, 0, -1, 0.0004, Number.NaN, Number.POSITIVE_INFINITY]);
    const s = h.stats()!;
    assert.equal(s.count, 4, 'NaN and Infinity are not recorded');
    assert.equal(s.min, -1, 'min is the exact value, negatives included');
    assert.equal(s.max, 0.0004);
    assert.equal(s.p50, 0);

    // Past the 24 h allocated up front the histogram grows; min/max/mean stay exact.
    const day = 24 * 3600 * 1000;
    const big = histogramOf([1, 2 * day, 3 * day]);
    assertClose(big.stats(), describeStats([1, 2 * day, 3 * day]), 'beyond 24 h');
    assertClose(LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(big))).merge(histogramOf([5])).stats(), describeStats([1, 2 * day, 3 * day, 5]), 'merged beyond 24 h');
  });

  test('serializes compactly and round-trips exactly', () => {
    const rng = new Rng(11);
    const h = histogramOf(Array.from({ length: 10_000 }, () => lognormalMs(rng, 80, 1)));
    const json = JSON.stringify(h);
    assert.ok(json.length < 4_000, `serialized size ${json.length} bytes`);
    const back = LatencyHistogram.fromJSON(JSON.parse(json));
    assert.deepEqual(back.stats(), h.stats());
    assert.equal(JSON.stringify(back), json);
    // The HDR part alone restores the count and the percentiles (sum, min, max become bucket estimates).
    const hdrOnly = LatencyHistogram.fromBase64(h.toBase64());
    assert.equal(hdrOnly.count, h.count);
    for (const key of ['p25', 'p50', 'p75', 'p90'] as const) assert.ok(Math.abs(hdrOnly.stats()![key] - h.stats()![key]) <= 0.001 * h.stats()![key], key);
    assert.throws(() => LatencyHistogram.fromJSON({ hdr: h.toBase64(), count: 3, sum: 0, m2: 0, min: 1, max: 2 }), /does not match/);
    assert.throws(() => LatencyHistogram.fromJSON({ count: 1 }), TypeError);
  });

  test('its fast recording path fills the same buckets as hdr-histogram-js\'s recordValue()', () => {
    const rng = new Rng(5);
    const edges = [0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097, 65_535, 65_536, 2 ** 30, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 36 + 7];
    const micros = [...edges, ...Array.from({ length: 20_000 }, () => Math.round(Math.exp(rng.next() * 30)))];
    for (const growing of [false, true]) {
      const reference = hdr.build({ bitBucketSize: 64, autoResize: true, lowestDiscernibleValue: 1, highestTrackableValue: growing ? 2048 : 24 * 3600 * 1_000_000, numberOfSignificantValueDigits: 3, useWebAssembly: false }) as hdr.JsHistogram;
      const fast = new LatencyHistogram({ growing });
      for (const us of micros) {
        reference.recordValue(us);
        fast.record(us / 1000);
      }
      if (!growing) assert.equal(fast.toBase64(), hdr.encodeIntoCompressedBase64(reference));
      // A growing histogram grows its range further at once (a different header): the same counts in every bucket.
      const decoded = hdr.decodeFromCompressedBase64(fast.toBase64(), 64, false) as hdr.JsHistogram;
      assert.equal(decoded.totalCount, micros.length);
      for (let i = 0; i < Math.max(decoded.countsArrayLength, reference.countsArrayLength); i++) {
        const [got, want] = [i < decoded.countsArrayLength ? decoded.getCountAtIndex(i) : 0, i < reference.countsArrayLength ? reference.getCountAtIndex(i) : 0];
        if (got !== want) assert.fail(`growing: ${growing}, bucket ${i}: ${got} values, recordValue() put ${want}`);
      }
    }
  });

  test('the merge of two (serialized) histograms is the histogram of the union', () => {
    const rng = new Rng(3);
    const a = Array.from({ length: 4_000 }, () => lognormalMs(rng, 20, 1));
    const b = Array.from({ length: 6_000 }, () => lognormalMs(rng, 200, 0.5));
    const union = histogramOf([...a, ...b]);
    const merged = LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(histogramOf(a)))).merge(LatencyHistogram.fromJSON(histogramOf(b).toJSON()));
    assert.equal(merged.toBase64(), union.toBase64(), 'same bucket counts');
    const [m, u] = [merged.stats()!, union.stats()!];
    for (const key of ['count', 'min', 'max', ...PERCENTILES] as const) assert.equal(m[key], u[key], key);
    for (const key of ['mean', 'std'] as const) assert.ok(Math.abs(m[key] - u[key]) <= 1e-12 * u[key], key);
    assertClose(m, describeStats([...a, ...b]), 'merged vs exact');
    // Merging an empty histogram (either way) changes nothing.
    assert.deepEqual(new LatencyHistogram().merge(histogramOf(a)).stats(), histogramOf(a).stats());
    assert.deepEqual(histogramOf(a).merge(new LatencyHistogram()).stats(), histogramOf(a).stats());
  });
});

/** Records with random latencies and 0-40 inter-token gaps each, some failed and some warmup. */
function randomRecords(seed: number, count: number): RequestRecord[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, (_, i) => {
    const sent = i * 10;
    if (i % 17 === 5) return makeFailed(i % 2 === 0 ? 'timeout_ttft' : 'http_status', { sent_at_ms: sent, done_at_ms: sent + 5 });
    const gaps = Array.from({ length: rng.int(0, 40) }, () => lognormalMs(rng, 15, 0.6));
    const ttft = lognormalMs(rng, 120, 0.8);
    const e2el = Math.round((ttft + gaps.reduce((x, y) => x + y, 0)) * 1000) / 1000;
    return makeRecord({
      warmup: i % 23 === 0,
      sent_at_ms: sent,
      done_at_ms: sent + e2el,
      ttft_ms: ttft,
      tpot_ms: gaps.length > 0 ? Math.round(((e2el - ttft) / gaps.length) * 1000) / 1000 : null,
      itl_ms: gaps,
      e2el_ms: e2el,
      input_num_tokens: rng.int(10, 40_000),
      output_num_tokens: gaps.length + 1,
      cached_tokens: i % 3 === 0 ? null : rng.int(0, 5_000),
      expected_cached_tokens: rng.int(0, 5_000),
    });
  });
}

describe('summary at scale', () => {
  const records = randomRecords(5, 400);
  const exact = summarize(records);

  test('past the exact limit, ITL comes from a histogram (approximate_metrics), everything else unchanged', () => {
    const gaps = exact.metrics.itl_ms!.count;
    assert.ok(gaps > 4_000, `${gaps} gaps`);
    assert.deepEqual(exact.approximate_metrics, []);
    const approx = summarize(records, { exactLimit: 1_000 });
    assert.deepEqual(approx.approximate_metrics, ['itl_ms']);
    assertClose(approx.metrics.itl_ms, exact.metrics.itl_ms, 'itl_ms');
    assert.deepEqual({ ...approx, metrics: { ...approx.metrics, itl_ms: null }, approximate_metrics: [] }, { ...exact, metrics: { ...exact.metrics, itl_ms: null } });
    // At the limit itself the gaps are still pooled exactly; the warmup-percentage summaries take the option too.
    assert.deepEqual(summarize(records, { exactLimit: gaps }), exact);
    assert.deepEqual(summarizeWarmupPercentages(records, [0], { exactLimit: 10 })['0%']!.approximate_metrics, ['itl_ms']);
  });

  test('LatencyHistograms cover the summary metrics\' populations', () => {
    const histograms = LatencyHistograms.fromJSON(JSON.parse(JSON.stringify(LatencyHistograms.fromRecords(records))));
    for (const metric of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms'] as const) {
      assertClose(histograms.byMetric[metric].stats(), exact.metrics[metric], metric);
    }
  });

  test('RunAggregate past its exact limit: exact counters and goodput, every Stats within 0.1%', () => {
    const slos = { ttft_ms: 150, e2el_ms: 600 };
    const expected = summarize(records, { slos });
    const s = RunAggregate.fromRecords(records, { slos, exactRecords: 0 }).summary();
    const present = Object.keys(expected.metrics).filter((m) => expected.metrics[m as keyof typeof expected.metrics] !== null);
    assert.ok(present.includes('input_num_tokens') && present.includes('cached_tokens'));
    assert.deepEqual(s.approximate_metrics, [...present, 'ttft_by_context']);
    for (const metric of Object.keys(expected.metrics) as Array<keyof typeof expected.metrics>) {
      if (expected.metrics[metric] === null) assert.equal(s.metrics[metric], null, metric);
      else assertClose(s.metrics[metric], expected.metrics[metric], metric);
    }
    assert.equal(s.ttft_by_context.length, expected.ttft_by_context.length);
    s.ttft_by_context.forEach((bucket, i) => {
      const { ttft_ms: ttft, ...rest } = expected.ttft_by_context[i]!;
      assert.deepEqual({ ...bucket, ttft_ms: null }, { ...rest, ttft_ms: null });
      assertClose(bucket.ttft_ms, ttft, bucket.label);
    });
    const counters = (x: typeof s) => ({ ...x, metrics: null, ttft_by_context: null, approximate_metrics: null });
    assert.deepEqual(counters(s), counters(expected));
    assert.ok(s.goodput !== null && s.goodput.good_requests > 0 && s.goodput.good_requests < s.completed);
  });
});
