import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { DATA_MARK_LABELS } from '../../src/report/charts.js';
import { renderCompareHtml } from '../../src/report/compare.js';
import { renderSweepHtml } from '../../src/report/sweep-html.js';
import { loadRunData } from '../../src/store/run-data.js';
import { summarize } from '../../src/metrics/summary.js';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import type { SweepPoint } from '../../src/metrics/sweep-point.js';
import { writeFileSync } from 'node:fs';
import { writeRunReports } from '../../src/report/write-reports.js';
import { browserSkipReason, launchChromium } from '../helpers/browser.js';
import { XSS, syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { repoPath } from '../helpers/repo.js';
import { tempDir } from '../helpers/tmp.js';

/** Screenshots go here (gitignored), so a person can look at what the test saw. */
const OUTPUT_DIR = repoPath('test-output');

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

/**
 * Layout and colour checks of a page: cards whose content is wider than the card (overflow), card values that wrap
 * to a second line, and legend entries naming one series with two colours, or a chart line drawn in a colour its legend
 * does not show.
 */
function pageChecks(page: Page): Promise<{ cards: number; overflowing: string[]; wrapped: string[]; colours: Record<string, string[]>; strayLines: string[] }> {
  return page.evaluate(() => {
    interface El {
      scrollWidth: number;
      clientWidth: number;
      textContent: string | null;
      getBoundingClientRect(): { height: number };
      querySelector(s: string): El | null;
      querySelectorAll(s: string): ArrayLike<El>;
      getAttribute(n: string): string | null;
      getAttributeNames(): string[];
    }
    const g = globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<El> }; getComputedStyle(e: El): { lineHeight: string } };
    const cards = Array.from(g.document.querySelectorAll('.card'));
    const overflowing: string[] = [];
    const wrapped: string[] = [];
    for (const card of cards) {
      if (card.scrollWidth > card.clientWidth + 1) overflowing.push(card.textContent ?? '');
      const value = card.querySelector('.v');
      if (value !== null && value.getBoundingClientRect().height > 1.5 * parseFloat(g.getComputedStyle(value).lineHeight)) wrapped.push(value.textContent ?? '');
    }
    const colours: Record<string, string[]> = {};
    const strayLines: string[] = [];
    for (const figure of Array.from(g.document.querySelectorAll('figure.chart'))) {
      const legend = new Set<string>();
      for (const swatch of Array.from(figure.querySelectorAll('span'))) {
        const svg = swatch.querySelector('svg');
        if (svg === null || swatch.getAttribute('class')?.endsWith('-swatch') !== true) continue;
        const name = swatch.textContent ?? '';
        const fill = svg.getAttribute('fill') ?? '';
        legend.add(fill);
        colours[name] = [...new Set([...(colours[name] ?? []), fill])];
      }
      if (legend.size === 0) continue;
      for (const path of Array.from(figure.querySelectorAll('g[aria-label="line"] path'))) {
        const stroke = path.getAttribute('stroke');
        if (stroke !== null && !legend.has(stroke)) strayLines.push(`${figure.getAttribute('data-chart')}: ${stroke}`);
      }
    }
    return { cards: cards.length, overflowing, wrapped, colours, strayLines };
  });
}

/** Asserts pageChecks found nothing wrong, and that the page has at least `minCards` cards. */
async function assertLayoutAndColours(page: Page, minCards: number): Promise<void> {
  const checks = await pageChecks(page);
  assert.ok(checks.cards >= minCards, `${checks.cards} cards`);
  assert.deepEqual(checks.overflowing, [], 'no card overflows');
  assert.deepEqual(checks.wrapped, [], 'no card value wraps');
  for (const [name, fills] of Object.entries(checks.colours)) assert.equal(fills.length, 1, `series "${name}" has one colour on every chart, has ${fills.join(', ')}`);
  assert.deepEqual(checks.strayLines, [], "every line is drawn in a colour of its chart's legend");
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
      await assertLayoutAndColours(page, 10);
      const text = await page.evaluate(() => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText);
      assert.match(text, /chatload run --max-num-requests 48 .*--sim-faults 500=0\.1/, 'the command line, with flag names');
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: join(OUTPUT_DIR, 'report.png'), fullPage: true });
      // A narrow window: the cards rearrange, none overflows or wraps.
      await page.setViewportSize({ width: 700, height: 900 });
      await assertLayoutAndColours(page, 10);
    } finally {
      await chromium.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('compare and sweep pages: no overflow, one colour per series across charts, screenshots saved', { timeout: 90_000 }, async () => {
    const dir = tempDir('browser-compare');
    const chromium = await launchChromium();
    try {
      const dirs = [1, 1.3, 0.8].map((scale, i) => {
        const d = join(dir, `run-${i}`);
        mkdirSync(d);
        writeRunDir(d, syntheticRecords({ latencyScale: scale, conversations: 12 }), { config: { numClients: 3 + i, url: 'http://127.0.0.1:8000' } });
        return d;
      });
      const runs = [];
      for (const d of dirs) runs.push(await loadRunData(d));
      const comparePath = join(dir, 'compare.html');
      writeFileSync(comparePath, renderCompareHtml(runs));
      const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
      const compare = await open(page, comparePath);
      assert.deepEqual(compare.consoleErrors, []);
      await assertLayoutAndColours(page, 0);
      const compareText = await page.evaluate(() => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText);
      assert.match(compareText, /Options that differ[^]*--num-clients/);
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: join(OUTPUT_DIR, 'compare.png'), fullPage: true });

      const points: SweepPoint[] = [2, 4, 8].map((value, i) => {
        const records = syntheticRecords({ latencyScale: 1 + i * 0.5, conversations: 30, failEvery: 0 });
        return { kind: 'concurrency', value, outputDir: join(dir, `0${i + 1}-concurrency-${value}`), summary: summarize(records), perTurn: summarizePerTurn(records), meetsSlos: null, stopReason: 'completed' };
      });
      const sweepPath = join(dir, 'sweep.html');
      writeFileSync(sweepPath, renderSweepHtml(points, { plan: 'clients: 2, 4, 8', bestRate: null }));
      const sweepPage = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
      const sweep = await open(sweepPage, sweepPath);
      assert.deepEqual(sweep.consoleErrors, []);
      await assertLayoutAndColours(sweepPage, 0);
      const ids = (await chartMarks(sweepPage)).map((c) => c.id);
      for (const id of ['sweep-pareto', 'sweep-ttft', 'sweep-tpot', 'sweep-itl', 'sweep-e2el', 'sweep-turns']) assert.ok(ids.includes(id), `${id} in ${ids.join(', ')}`);
      const links = await sweepPage.evaluate(() => Array.from((globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ getAttribute(n: string): string | null }> } }).document.querySelectorAll('#points a')).map((a) => a.getAttribute('href')));
      assert.deepEqual(links, ['01-concurrency-2/report.html', '02-concurrency-4/report.html', '03-concurrency-8/report.html']);
      await sweepPage.screenshot({ path: join(OUTPUT_DIR, 'sweep.png'), fullPage: true });
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
