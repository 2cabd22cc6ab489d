// Comparing Stats from a histogram with exact ones (not a test file: the runner's glob is test/*/*.test.ts).
import assert from 'node:assert/strict';
import type { Stats } from '../../src/metrics/stats.js';

/** The percentile fields of a Stats. */
export const STATS_PERCENTILES = ['p25', 'p50', 'p75', 'p90', 'p99', 'p99_9'] as const;

/**
 * Asserts histogram-derived Stats against exact ones: count, min and max equal; mean and std within `exact` relative
 * (they are tracked exactly); every percentile within `tolerance` relative (LatencyHistogram's 0.1% bound).
 */
export function assertStatsClose(actual: Stats | null, expected: Stats | null, label: string, tolerance = 0.001, exact = 1e-9): void {
  assert.ok(actual !== null && expected !== null, `${label}: both present`);
  assert.equal(actual.count, expected.count, `${label}: count`);
  assert.equal(actual.min, expected.min, `${label}: min`);
  assert.equal(actual.max, expected.max, `${label}: max`);
  for (const key of ['mean', 'std'] as const) {
    assert.ok(Math.abs(actual[key] - expected[key]) <= exact * Math.abs(expected[key]), `${label}: ${key} ${actual[key]} vs ${expected[key]}`);
  }
  for (const key of STATS_PERCENTILES) {
    const error = Math.abs(actual[key] - expected[key]);
    assert.ok(error <= tolerance * Math.abs(expected[key]), `${label}: ${key} ${actual[key]} vs exact ${expected[key]} (relative error ${error / expected[key]})`);
  }
}
