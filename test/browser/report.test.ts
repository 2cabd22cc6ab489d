import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { DATA_MARK_LABELS } from '../../src/report/charts.js';
import { writeRunReports } from '../../src/report/write-reports.js';
import { browserSkipReason, launchChromium } from '../helpers/browser.js';
import { XSS, syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

/** Screenshots go here (gitignored), so a person can look at what the test saw. */
const OUTPUT_DIR = fileURLToPath(new URL('../../test-output/', import.meta.url));

const skip = browserSkipReason();

/** Opens a file in the page and records console errors, page errors and every request other than the file itself. */
async function open(page: Page, path: string): Promise<{ consoleErrors: string[]; requests: string[] }> {
  const url = pathToFileURL(path).href;
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  page.on('request', (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  await page.goto(url, { waitUntil: 'load', timeout: 20_000 });
  return { consoleErrors, requests };
}

/** Per chart (figure.chart): its id, how many data marks (lines with a path, dots, bars) it drew, and its size. */
function chartMarks(page: Page): Promise<Array<{ id: string; marks: number; width: number; height: number }>> {
  return page.evaluate((labels: readonly string[]) => {
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<DomElement> } }).document;
    interface DomElement {
      getAttribute(name: string): string | null;
      querySelectorAll(s: string): ArrayLike<DomElement>;
      querySelector(s: string): DomElement | null;
      getBoundingClientRect(): { width: number; height: number };
      tagName: string;
    }
    return Array.from(doc.querySelectorAll('figure.chart')).map((figure) => {
      let marks = 0;
      for (const label of labels) {
        for (const g of Array.from(figure.querySelectorAll(`g[aria-label="${label}"]`))) {
          for (const el of Array.from(g.querySelectorAll('path, circle, rect'))) {
            const box = el.getBoundingClientRect();
            const drawn = el.tagName.toLowerCase() === 'path' ? (el.getAttribute('d') ?? '').length > 3 : box.width > 0 || box.height > 0;
            if (drawn) marks++;
          }
        }
      }
      const svgBox = figure.querySelector('svg[viewBox]')?.getBoundingClientRect() ?? { width: 0, height: 0 };
      return { id: figure.getAttribute('data-chart') ?? '?', marks, width: svgBox.width, height: svgBox.height };
    });
  }, DATA_MARK_LABELS);
}

describe('report.html in headless Chromium', { skip, timeout: 120_000 }, () => {
  test('a real run\'s report loads offline with no console error, every chart has data marks, screenshot saved', { timeout: 90_000 }, async () => {
    const dir = tempDir('browser-run');
    const chromium = await launchChromium();
    try {
      // A real run against the built-in simulator, with injected 500s so the errors chart has data too.
      const result = await runBenchmark({ outputDir: dir, maxNumRequests: 48, simFaults: '500=0.1', maxErrorRate: 1 });
      assert.ok(result.summary.completed > 0);
      const written = await writeRunReports(dir, { html: true });

      const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
      const { consoleErrors, requests } = await open(page, written.html!);
      assert.deepEqual(consoleErrors, [], 'no console errors');
      assert.deepEqual(requests, [], 'no network requests');

      const charts = await chartMarks(page);
      const ids = charts.map((c) => c.id);
      const expected = ['ttft-per-turn', 'tpot-per-turn', 'e2el-per-turn', 'tokens-per-turn', 'cache-hit-per-turn', 'ttft-cdf', 'tpot-cdf', 'itl-cdf', 'e2el-cdf', 'request-throughput-over-time', 'token-throughput-over-time', 'in-flight-over-time', 'ttft-over-time', 'cache-hit-over-time'];
      if (result.summary.failed > 0) expected.push('errors-over-time');
      for (const id of expected) assert.ok(ids.includes(id), `chart ${id} present (have ${ids.join(', ')})`);
      for (const chart of charts) {
        assert.ok(chart.marks > 0, `chart ${chart.id} has data marks`);
        assert.ok(chart.width > 100 && chart.height > 100, `chart ${chart.id} is visible (${chart.width}x${chart.height})`);
      }
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: join(OUTPUT_DIR, 'report.png'), fullPage: true });
    } finally {
      await chromium.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a <script> and an "><img onerror> in the run\'s text show as text and never run', { timeout: 60_000 }, async () => {
    const dir = tempDir('browser-xss');
    const chromium = await launchChromium();
    try {
      writeRunDir(dir, syntheticRecords({ text: XSS }), { model: `model ${XSS}`, config: { model: XSS }, warnings: [XSS] });
      const written = await writeRunReports(dir, { html: true });
      const page = await chromium.browser.newPage();
      const { consoleErrors, requests } = await open(page, written.html!);
      const state = await page.evaluate(() => {
        const g = globalThis as unknown as { __pwned?: number; document: { querySelectorAll(s: string): ArrayLike<unknown>; body: { innerText: string }; title: string } };
        return { pwned: g.__pwned ?? null, images: g.document.querySelectorAll('img').length, scripts: g.document.querySelectorAll('script').length, text: g.document.body.innerText, title: g.document.title };
      });
      assert.equal(state.pwned, null, 'no injected script ran');
      assert.equal(state.images, 0, 'no injected element');
      assert.equal(state.scripts, 0);
      assert.ok(state.text.includes(XSS), 'the payload is visible as text');
      assert.ok(state.title.includes('<script>'), 'the title shows the model name as text');
      assert.deepEqual(requests, [], 'the injected <img src=x> made no request');
      assert.deepEqual(consoleErrors, []);
    } finally {
      await chromium.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
