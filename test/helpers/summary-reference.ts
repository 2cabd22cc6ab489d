// An independent computation of a run's summary figures from its records (issue #33: tests compared RunAggregate with
// summarize(), which shares its code): numpy's percentile, sums and counts written here, apart from src/metrics/.
import assert from 'node:assert/strict';
import type { Slos } from '../../src/metrics/goodput.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { Summary } from '../../src/metrics/summary.js';

/** numpy's default percentile (`linear`): rank p/100 × (n − 1), interpolated; written here, apart from stats.ts. */
export function numpyPercentile(sorted: readonly number[], p: number): number {
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/**
 * The summary's figures computed here from the records, independently of chatload's summary code (which
 * RunAggregate and summarize() share): counts, sums, the cache hit ratio, goodput, and each latency's count, mean,
 * min, max and percentiles.
 */
/**
 * `tolerance`: how far a figure may be from the reference, in its own unit (ms, s): results.json keeps times to the
 * microsecond, so a summary read back from a file differs by rounding.
 */
export function assertAgainstReference(actual: Summary, from: readonly RequestRecord[], slos: Slos | undefined, label: string, tolerance = 1e-9): void {
  const measured = from.filter((r) => !r.warmup);
  const ok = measured.filter((r) => r.status === 'ok');
  const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
  assert.equal(actual.requests, measured.length, `${label}: requests`);
  assert.equal(actual.completed, ok.length, `${label}: completed`);
  assert.equal(actual.failed, measured.length - ok.length, `${label}: failed`);
  assert.equal(actual.total_input_tokens, sum(ok.map((r) => r.input_num_tokens)), `${label}: input tokens`);
  assert.equal(actual.total_output_tokens, sum(ok.map((r) => r.output_num_tokens)), `${label}: output tokens`);
  const known = ok.filter((r) => r.cached_tokens !== null);
  assert.equal(actual.cache_hit_ratio, sum(known.map((r) => r.cached_tokens!)) / sum(known.map((r) => r.input_num_tokens)), `${label}: hit ratio`);
  const runtime = (Math.max(...measured.map((r) => r.done_at_ms)) - Math.min(...measured.map((r) => r.sent_at_ms))) / 1000;
  assert.ok(Math.abs(actual.runtime_sec - runtime) <= tolerance, `${label}: runtime ${actual.runtime_sec} != ${runtime}`);
  if (slos !== undefined) {
    const good = ok.filter((r) => r.ttft_ms! <= slos.ttft_ms! && r.e2el_ms <= slos.e2el_ms!).length;
    assert.equal(actual.goodput?.good_requests, good, `${label}: goodput`);
  }
  for (const metric of ['ttft_ms', 'tpot_ms', 'e2el_ms'] as const) {
    const values = ok.flatMap((r) => (r[metric] === null ? [] : [r[metric]])).sort((a, b) => a - b);
    const stats = actual.metrics[metric]!;
    assert.equal(stats.count, values.length, `${label}: ${metric} count`);
    assert.ok(Math.abs(stats.mean - sum(values) / values.length) <= tolerance, `${label}: ${metric} mean`);
    assert.deepEqual([stats.min, stats.max], [values[0], values.at(-1)], `${label}: ${metric} min, max`);
    for (const [p, key] of [[25, 'p25'], [50, 'p50'], [90, 'p90'], [99, 'p99']] as const) {
      assert.ok(Math.abs(stats[key] - numpyPercentile(values, p)) <= tolerance, `${label}: ${metric} ${key} ${stats[key]} != ${numpyPercentile(values, p)}`);
    }
  }
}

