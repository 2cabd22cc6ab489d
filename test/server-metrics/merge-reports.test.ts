// The server's own counters across merged runs (`chatload merge` of shards that scraped one server): the merged window's
// delta is the latest run's last read less the earliest run's first, never the sum of the runs' deltas, which counts the
// traffic of overlapping runs twice. Unit cases here; test/server-metrics/merge-shards.test.ts runs two overlapping
// shards against the simulator over loopback and checks the merged counters against the merged records.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mergeServerMetrics, type ServerMetricsPart } from '../../src/server-metrics/merge-reports.js';
import { counterDeltas, type ServerMetricsPoint, type ServerMetricsReport } from '../../src/server-metrics/scraper.js';

const URL_A = 'http://127.0.0.1:8000/metrics';

/**
 * A page read with these prefix-cache counters (gauges 0) and token counters that follow them (prompt = queries,
 * generated a tenth, a request per 100), or without token counters (`tokens` false: a file before schema 1.1.0).
 */
function point(queries: number, hits: number, tokens = true): ServerMetricsPoint {
  const p: ServerMetricsPoint = { prefix_cache_queries: queries, prefix_cache_hits: hits, requests_running: 0, requests_waiting: 0, kv_cache_usage: 0 };
  return tokens ? { ...p, prompt_tokens: queries, generation_tokens: queries / 10, requests: Math.round(queries / 100) } : p;
}

/** A run's report from its first and last read, its samples at these times (ms on its own clock, the first and last its span). */
function part(dir: string, offsetMs: number, before: ServerMetricsPoint | null, after: ServerMetricsPoint | null, times: number[], url = URL_A): ServerMetricsPart {
  const report: ServerMetricsReport = {
    url,
    scrapes: times.length,
    failures: 0,
    last_error: null,
    before,
    after,
    ...counterDeltas(before, after),
    engine: 'vllm',
    warning: null,
    series: times.map((t_ms) => ({ t_ms, requests_running: 1, requests_waiting: 0, kv_cache_usage: 0.5 })),
  };
  return { dir, report, offsetMs, startMs: offsetMs + times[0]!, endMs: offsetMs + times.at(-1)! };
}

describe('mergeServerMetrics', () => {
  test('overlapping runs: the first read of the earliest run to the last of the latest, not the sum of the deltas', () => {
    // b starts 300 ms after a and ends after it; each saw the other's traffic while they overlapped.
    const a = part('a', 0, point(1000, 400), point(1600, 900), [0, 500, 1000]);
    const b = part('b', 300, point(1100, 450), point(1800, 1000), [0, 500, 1000]);
    const { report, warnings } = mergeServerMetrics([b, a], 2);
    assert.deepEqual(warnings, []);
    assert.equal(report!.prefix_cache_queries, 800);
    assert.equal(report!.prefix_cache_hits, 600);
    assert.equal(report!.server_cache_hit_rate, 600 / 800);
    assert.equal(report!.prompt_tokens, 800);
    assert.equal(report!.generation_tokens, 80);
    assert.equal(report!.requests, 8);
    assert.ok(a.report.prefix_cache_queries! + b.report.prefix_cache_queries! > 800, 'the sum would count the overlap twice');
    assert.deepEqual(report!.before, a.report.before);
    assert.deepEqual(report!.after, b.report.after);
    assert.deepEqual(
      report!.series.map((s) => s.t_ms),
      [0, 300, 500, 800, 1000, 1300],
    );
    assert.equal(report!.scrapes, 6);
    assert.equal(report!.url, URL_A);
  });

  test('a counter that went back between runs (a restart) leaves the deltas out, with a warning naming it', () => {
    const a = part('a', 0, point(1000, 400), point(1600, 900), [0, 1000]);
    const b = part('b', 2000, point(50, 0), point(300, 100), [0, 1000]);
    const { report, warnings } = mergeServerMetrics([a, b], 2);
    assert.equal(report!.prefix_cache_queries, null);
    assert.equal(report!.prefix_cache_hits, null);
    assert.equal(report!.prompt_tokens, null);
    assert.equal(report!.server_cache_hit_rate, null);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /went back .*restart.*prefix_cache_queries \(a read 1600 after its run, then b 50 before its later one\)/);
  });

  test('runs that scraped different pages are not merged: one server cannot be told from another', () => {
    const { report, warnings } = mergeServerMetrics([part('a', 0, point(0, 0), point(10, 5), [0, 1]), part('b', 0, point(0, 0), point(10, 5), [0, 1], 'http://127.0.0.1:9000/metrics')], 2);
    assert.equal(report, null);
    assert.match(warnings[0]!, /different pages \(http:\/\/127\.0\.0\.1:8000\/metrics, http:\/\/127\.0\.0\.1:9000\/metrics\)/);
  });

  test('runs without a report are named: the counters cover the windows of the runs that scraped', () => {
    const { report, warnings } = mergeServerMetrics([part('a', 0, point(0, 0), point(500, 100), [0, 10])], 3);
    assert.equal(report!.prefix_cache_queries, 500);
    assert.match(warnings[0]!, /1 of the 3 merged runs scraped/);
  });

  test("a lone run of a file before schema 1.1.0 (no token counters in before/after) keeps its own deltas", () => {
    const old = part('a', 0, point(0, 0, false), point(500, 100, false), [0, 10]);
    Object.assign(old.report, { prompt_tokens: 500, generation_tokens: 60, requests: 5 });
    const { report } = mergeServerMetrics([old], 1);
    assert.equal(report!.prompt_tokens, 500);
    assert.equal(report!.generation_tokens, 60);
    assert.equal(report!.requests, 5);
    assert.equal(report!.prefix_cache_queries, 500);
    // Two such runs have no values to subtract: their token deltas are unknown, not summed.
    const other = part('b', 20, point(500, 100, false), point(900, 300, false), [0, 10]);
    const two = mergeServerMetrics([old, other], 2).report!;
    assert.equal(two.prompt_tokens, null);
    assert.equal(two.prefix_cache_queries, 900);
  });

  test('a run whose read before or after failed could hold an end of the window: the deltas are unknown', () => {
    const a = part('a', 0, null, point(1600, 900), [0, 1000]);
    const b = part('b', 300, point(1100, 450), point(1800, 1000), [0, 1000]);
    const { report, warnings } = mergeServerMetrics([a, b], 2);
    assert.equal(report!.prefix_cache_queries, null, 'not b.after less b.before: that leaves out what a saw first');
    assert.deepEqual(warnings, ['server_metrics: the scrape before or after the run failed in a, so the merged deltas are unknown']);
  });

  test('runs that started together in any order: the smallest before and the largest after, whatever the clocks say', () => {
    // b sent first, but a's scrape before was the earlier read (the smaller value): no false alarm, nothing left out.
    const a = part('a', 0, point(400, 100), point(2000, 900), [200, 1000]);
    const b = part('b', 0, point(450, 120), point(1900, 850), [150, 900]);
    const { report, warnings } = mergeServerMetrics([a, b], 2);
    assert.deepEqual(warnings, []);
    assert.equal(report!.prefix_cache_queries, 1600);
    assert.equal(report!.prefix_cache_hits, 800);
  });

  test('a counter lower after a run than before it went back within the run', () => {
    const { report, warnings } = mergeServerMetrics([part('a', 0, point(900, 100), point(300, 50), [0, 10]), part('b', 0, point(0, 0), point(100, 10), [0, 10])], 2);
    assert.equal(report!.prefix_cache_hits, null);
    assert.match(warnings[0]!, /prefix_cache_queries \(a read 900 before its run, then 300 after it\)/);
  });

  test('no run scraped: nothing to merge, nothing to say', () => {
    assert.deepEqual(mergeServerMetrics([], 2), { report: null, warnings: [] });
  });
});
