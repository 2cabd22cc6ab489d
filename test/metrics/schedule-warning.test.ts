// The schedule-lag warning says what it measured and leaves the client's share to client health (issue #34: it read
// "the client or the server's pace distorted the load" beside the report's "the client kept up").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scheduleWarning } from '../../src/metrics/run-analysis.js';
import type { Stats } from '../../src/metrics/stats.js';
import type { Summary } from '../../src/metrics/summary.js';

const stats = (p99: number): Stats => ({ count: 100, mean: p99 / 2, std: 1, min: 0, p25: 1, p50: 2, p75: 3, p90: 4, p99, 'p99.9': p99, max: p99 }) as unknown as Stats;

test('lag without a cap: the offered load was lower than asked; whether the client was busy is client health\'s to say', () => {
  const summary = { metrics: { schedule_lag_ms: stats(45), queue_ms: null, e2el_from_scheduled_ms: null, e2el_ms: stats(100) } } as unknown as Summary;
  const warning = scheduleWarning(summary)!;
  assert.match(warning, /^requests went out late against their schedule \(lag p99 45\.0 ms\) without waiting for a cap, so the offered load was lower than asked: .*client health says whether the client was busy/);
  assert.doesNotMatch(warning, /distorted/);
  const quiet = { metrics: { schedule_lag_ms: stats(5), queue_ms: null, e2el_from_scheduled_ms: null, e2el_ms: stats(100) } } as unknown as Summary;
  assert.equal(scheduleWarning(quiet), undefined);
});
