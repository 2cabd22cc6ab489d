import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { compareRuns, delta, formatComparison, renderCompareHtml } from '../../src/report/compare.js';
import { fmtNum } from '../../src/report/html-util.js';
import { loadRunData } from '../../src/store/run-data.js';
import { runCli } from '../helpers/cli.js';
import { syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

/** Two runs whose latencies differ by exactly 2x: every latency delta is +100%. */
function twoRuns(root: string): [string, string] {
  const a = join(root, 'baseline');
  const b = join(root, 'slower');
  mkdirSync(a);
  mkdirSync(b);
  writeRunDir(a, syntheticRecords({ latencyScale: 1 }));
  writeRunDir(b, syntheticRecords({ latencyScale: 2 }));
  return [a, b];
}

describe('compare', { timeout: 60_000 }, () => {
  test('delta is absolute and relative to the baseline', () => {
    assert.deepEqual(delta(10, 15), { abs: 5, rel: 0.5 });
    assert.deepEqual(delta(0, 3), { abs: 3, rel: null });
    assert.deepEqual(delta(null, 3), { abs: null, rel: null });
  });

  test('compareRuns lines up the key metrics; formatComparison prints values, deltas and percentages', async () => {
    const root = tempDir('compare');
    try {
      const runs = await Promise.all(twoRuns(root).map((dir) => loadRunData(dir)));
      const rows = compareRuns(runs);
      const ttftP50 = rows.find((r) => r.key === 'ttft p50')!;
      assert.equal(ttftP50.values[1], ttftP50.values[0]! * 2);
      const text = formatComparison(runs, { color: false });
      assert.ok(!text.includes('\x1b['), 'no ANSI without colour');
      const line = text.split('\n').find((l) => l.includes('ttft p50'))!;
      const a = ttftP50.values[0]!;
      assert.ok(line.includes(fmtNum(a)) && line.includes(fmtNum(2 * a)), line);
      assert.ok(line.includes(`+${fmtNum(a)}`) && line.includes('+100.0%'), line);
      const completed = text.split('\n').find((l) => /│ completed /.test(l))!;
      assert.match(completed, /│\s+0 │\s+0\.0% │/, 'same count: zero delta');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('chatload compare A B prints the deltas and --html writes overlaid charts', async () => {
    const root = tempDir('compare-cli');
    try {
      const [a, b] = twoRuns(root);
      const htmlPath = join(root, 'compare.html');
      const result = await runCli(['compare', a, b, '--html', htmlPath], { timeoutMs: 30_000 });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /baseline: baseline/);
      assert.match(result.stdout, /│ metric\s+│ unit\s+│\s+baseline │\s+slower │\s+Δ │\s+Δ% │/);
      assert.match(result.stdout, /e2el p50 .*\+100\.0%/);
      const html = readFileSync(htmlPath, 'utf8');
      assert.match(html, /data-chart="compare-ttft-per-turn"/);
      assert.match(html, /data-chart="compare-itl-cdf"/);
      assert.doesNotMatch(html, /<script/i);
      assert.ok(renderCompareHtml([await loadRunData(a), await loadRunData(b)]).length > 1000);

      const one = await runCli(['compare', a], { timeoutMs: 30_000 });
      assert.equal(one.code, 2);
      assert.match(one.stderr, /at least two/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('chatload report writes the files asked for and fails with exit 2 on a bad directory', async () => {
    const root = tempDir('report-cli');
    try {
      writeRunDir(root, syntheticRecords());
      const out = join(root, 'elsewhere.html');
      const result = await runCli(['report', root, '--excel', '--csv', '-o', out], { timeoutMs: 30_000 });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(result.stdout.trim().split('\n').sort(), [out, join(root, 'report.xlsx'), join(root, 'requests.csv')].sort());
      const bad = await runCli(['report', join(root, 'nope')], { timeoutMs: 30_000 });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /not a results directory/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
