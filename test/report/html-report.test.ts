import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DatasetError } from '../../src/errors/index.js';
import { escapeHtml } from '../../src/report/html-util.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { loadRunData, normalizeRecord } from '../../src/store/run-data.js';
import { cdfPoints, niceBinSec, timeSeries } from '../../src/report/series.js';
import { writeRunReports } from '../../src/report/write-reports.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { XSS, syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

describe('HTML report', { timeout: 30_000 }, () => {
  test('writeRunReports writes one self-contained report.html with every section and chart', async () => {
    const dir = tempDir('html');
    try {
      writeRunDir(dir, syntheticRecords());
      const written = await writeRunReports(dir, { html: true });
      assert.deepEqual(written, { html: join(dir, 'report.html') });
      const html = readFileSync(written.html!, 'utf8');
      for (const id of ['summary', 'per-turn', 'distributions', 'over-time', 'client', 'errors', 'config']) {
        assert.match(html, new RegExp(`<section id="${id}">`));
      }
      for (const chart of ['ttft-per-turn', 'tpot-per-turn', 'e2el-per-turn', 'tokens-per-turn', 'cache-hit-per-turn', 'ttft-cdf', 'tpot-cdf', 'itl-cdf', 'e2el-cdf', 'request-throughput-over-time', 'in-flight-over-time', 'ttft-over-time', 'errors-over-time']) {
        assert.match(html, new RegExp(`data-chart="${chart}"`), chart);
      }
      // Offline by construction: no script, no external reference, a CSP that forbids fetching anything.
      assert.doesNotMatch(html, /<script/i);
      assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//i);
      assert.doesNotMatch(html, /@import|url\(/i);
      assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
      assert.doesNotMatch(html, /did not finish/);
      // Turn axes tick at whole turns only (a 1.5th turn does not exist).
      for (const chart of ['ttft-per-turn', 'tokens-per-turn', 'cache-hit-per-turn']) {
        const figure = html.slice(html.indexOf(`data-chart="${chart}"`));
        const ticks = [.../aria-label="x-axis tick label">([\s\S]*?)<\/g>/.exec(figure)![1]!.matchAll(/>([^<]*)<\/text>/g)].map((m) => m[1]!);
        assert.ok(ticks.length > 0 && ticks.every((t) => /^\d+$/.test(t)), `${chart} x ticks: ${ticks.join(' ')}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('model, dataset, ids, error messages and config values are escaped', async () => {
    const dir = tempDir('html-xss');
    try {
      writeRunDir(dir, syntheticRecords({ text: XSS }), {
        model: `model${XSS}`,
        config: { model: XSS, headers: [`X-Note: ${XSS}`] },
        warnings: [`warning ${XSS}`],
      });
      const html = renderHtmlReport(await loadRunData(dir));
      assert.doesNotMatch(html, /<script/i);
      assert.doesNotMatch(html, /<img/i);
      assert.doesNotMatch(html, /onerror="/i);
      assert.ok(html.includes(escapeHtml(XSS)), 'the payload shows as text');
      assert.ok(html.includes(`conv-1${escapeHtml(XSS)}`), 'conversation ids are escaped');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a run without results.json is summarized from requests.jsonl and says it did not finish', async () => {
    const dir = tempDir('html-partial');
    try {
      const records = syntheticRecords();
      writeRunDir(dir, records, { finished: false });
      // A torn last line, as a kill mid-write leaves it.
      const jsonl = readFileSync(join(dir, 'requests.jsonl'), 'utf8');
      writeFileSync(join(dir, 'requests.jsonl'), `${jsonl}{"conversation_id":"torn`);
      const data = await loadRunData(dir);
      assert.equal(data.finished, false);
      assert.equal(data.records.length, records.length);
      assert.equal(data.summary.requests, records.length);
      assert.ok(data.perTurn.length > 0);
      const written = await writeRunReports(dir, { html: true });
      const html = readFileSync(written.html!, 'utf8');
      // Said once (issue #34, item 7: it read "This run did not finish. The run did not finish: ...").
      assert.match(html, new RegExp(`<strong>This run did not finish:</strong> results\\.json is missing, so these figures are summarized from the ${records.length} records in requests\\.jsonl`));
      const banner = /<div class="banner bad">.*?<\/div>/.exec(html)?.[0] ?? '';
      assert.equal(banner.match(/did not finish/gi)?.length, 1, `the banner says it once: ${banner}`);
      assert.match(html, /data-chart="ttft-per-turn"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a directory with neither file is a DatasetError (exit 2)', async () => {
    const dir = tempDir('html-empty');
    try {
      await assert.rejects(writeRunReports(dir, { html: true }), (error: unknown) => error instanceof DatasetError && error.exitCode === 2);
      await assert.rejects(loadRunData(join(dir, 'missing')), DatasetError);
      assert.equal(existsSync(join(dir, 'report.html')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('records are read tolerantly: unknown fields kept, missing optional ones defaulted', () => {
    const r = normalizeRecord({ conversation_id: 'c', turn: 2, status: 'error', e2el_ms: 5, new_field: 7 } as unknown as RequestRecord);
    assert.equal(r.itl_ms.length, 0);
    assert.equal(r.error_kind, 'other');
    assert.equal(r.latency_ms, 5);
    assert.equal(r.cached_tokens, null);
    assert.equal((r as unknown as Record<string, unknown>).new_field, 7);
  });
});

describe('chart data', () => {
  test('cdfPoints runs from min to max at exact percentiles', () => {
    const points = cdfPoints([5, 1, 3, 2, 4], 5);
    assert.deepEqual(points.map((p) => p.value), [1, 2, 3, 4, 5]);
    assert.deepEqual(points.map((p) => p.fraction), [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual(cdfPoints([]), []);
  });

  test('niceBinSec picks a 1-2-5 step', () => {
    assert.equal(niceBinSec(60, 60), 1);
    assert.equal(niceBinSec(100, 60), 2);
    assert.equal(niceBinSec(250, 60), 5);
    assert.equal(niceBinSec(0.5, 60), 0.01);
  });

  test('timeSeries counts completions, failures and in-flight requests exactly', () => {
    const records = syntheticRecords({ conversations: 2, turns: 2, failEvery: 4 });
    const ts = timeSeries(records);
    const completed = ts.bins.reduce((n, b) => n + b.request_rate * ts.bin_sec, 0);
    assert.ok(Math.abs(completed - 3) < 1e-6, `completed ${completed}`);
    assert.equal(ts.bins.reduce((n, b) => n + (b.errors.http_status ?? 0), 0), 1);
    assert.ok(Math.max(...ts.bins.map((b) => b.in_flight_max)) === 2);
  });
});
