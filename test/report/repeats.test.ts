import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summarize } from '../../src/metrics/summary.js';
import { fmtNum } from '../../src/report/html-util.js';
import { fmtMeanInterval, repeatIntervals, t95, formatRepeatIntervals } from '../../src/report/repeats.js';
import { renderRepeatsHtml } from '../../src/report/repeats-html.js';
import { syntheticRecords } from '../helpers/report-fixtures.js';

describe('repeatIntervals (--repeat)', () => {
  test("each metric's mean and 95% half-width t(0.975, n-1)·s/√n across the runs", () => {
    const summaries = [1, 1.1, 1.2].map((scale) => summarize(syntheticRecords({ latencyScale: scale, failEvery: 0 })));
    const rows = repeatIntervals(summaries);
    const ttft = rows.find((r) => r.key === 'ttft p50')!;
    const xs = summaries.map((s) => s.metrics.ttft_ms!.p50);
    const mean = (xs[0]! + xs[1]! + xs[2]!) / 3;
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / 2);
    assert.deepEqual(ttft.values, xs);
    assert.ok(Math.abs(ttft.mean! - mean) < 1e-9);
    assert.ok(Math.abs(ttft.ci95_half_width! - (4.303 * sd) / Math.sqrt(3)) < 1e-9);
    // 24 requests per run: a p99 is not supported, so no value and no interval.
    const p99 = rows.find((r) => r.key === 'ttft p99')!;
    assert.deepEqual(p99.values, [null, null, null]);
    assert.equal(p99.ci95_half_width, null);
    assert.match(formatRepeatIntervals(rows, 3), /ttft p50 .* ms /);
  });

  test('one run has a mean but no interval; t quantiles fall to 1.96 past 30 degrees of freedom', () => {
    const rows = repeatIntervals([summarize(syntheticRecords())]);
    assert.ok(rows.every((r) => r.ci95_half_width === null));
    assert.equal(t95(1), 12.706);
    assert.equal(t95(30), 2.042);
    assert.equal(t95(100), 1.96);
  });

  test('fmtMeanInterval: "mean ± half-width" as the sweep shows it, the mean alone for one run, "-" without a value', () => {
    const interval = (values: Array<number | null>, unit = 'ms') => {
      const xs = values.filter((v): v is number => v !== null);
      const mean = xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
      return { key: 'k', unit, values, mean, ci95_half_width: xs.length >= 2 ? 0.9 : null };
    };
    assert.equal(fmtMeanInterval([interval([28, 28.2])], 'k'), '28.10 ± 0.90');
    assert.equal(fmtMeanInterval([interval([28])], 'k'), '28');
    assert.equal(fmtMeanInterval([interval([null])], 'k'), '-');
    assert.equal(fmtMeanInterval([interval([0.5, 0.5], 'fraction')], 'k'), '50.0% ± 90.0%');
    assert.equal(fmtMeanInterval([], 'missing'), '-');
  });

  test('repeats.html: the intervals, each run\'s value and its report link; a server\'s text is escaped; no script, CSP none', () => {
    const intervals = repeatIntervals([1, 1.2].map((scale) => summarize(syntheticRecords({ latencyScale: scale }))));
    const html = renderRepeatsHtml({
      intervals,
      repeat: 3,
      runs: [{ dir: '/r/out/repeat-1', html: '/r/out/repeat-1/report.html' }, { dir: '/r/out/repeat-2' }],
      dir: '/r/out',
      model: '<script>alert(1)</script>',
      server: 'http://x/"><img src=x>',
      date: new Date('2025-01-02T03:04:05Z'),
    });
    assert.doesNotMatch(html, /<script|<img/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(html, /content="default-src 'none';/);
    const ttft = intervals.find((r) => r.key === 'ttft p50')!;
    assert.ok(html.includes(`<th>ttft p50</th><td>ms</td><td class="num">${fmtNum(ttft.mean)}</td><td class="num">${fmtNum(ttft.ci95_half_width)}</td>`));
    assert.match(html, /<li>#1: repeat-1 \(<a href="repeat-1\/report\.html">report<\/a>\)<\/li><li>#2: repeat-2<\/li>/);
    assert.match(html, /2 of 3 repetitions finished/);
    assert.match(html, /2025-01-02T03:04:05\.000Z/);
  });
});
