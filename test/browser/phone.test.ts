// Reports read on a phone (issue #34, item 4): report.html, compare.html and sweep.html from a real sweep against the
// built-in simulator, opened in headless Chromium at 420 px and at 1280 px wide.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { runSweep, type SweepResult } from '../../src/benchmark/sweep.js';
import { renderCompareHtml } from '../../src/report/compare.js';
import { writeRunReports } from '../../src/report/write-reports.js';
import { loadRunData } from '../../src/store/run-data.js';
import { browserSkipReason, launchChromium } from '../helpers/browser.js';
import { layoutProblems, MIN_SVG_TEXT_PX, type LayoutReport } from '../helpers/layout-checks.js';
import { syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { repoPath } from '../helpers/repo.js';
import { tempDir } from '../helpers/tmp.js';

/** Screenshots go here (gitignored), so a person can look at what the test saw. */
const OUTPUT_DIR = repoPath('test-output');

const skip = browserSkipReason();

/** Everything wrong with one page at one width, as lines (empty when the page reads well there). */
function problemsOf(page: string, r: LayoutReport): string[] {
  const at = `${page} at ${r.innerWidth} px`;
  const lines: string[] = [];
  if (r.scrollWidth > r.innerWidth) lines.push(`${at}: the page scrolls sideways (scrollWidth ${r.scrollWidth} px)`);
  for (const p of r.pastViewport.slice(0, 8)) lines.push(`${at}: past the viewport, in no scrolling box: ${p}`);
  for (const t of r.unboxedTables) lines.push(`${at}: a table in no box that scrolls itself: ${t}`);
  if (r.smallestSvgText !== null && r.smallestSvgText.px < MIN_SVG_TEXT_PX) {
    lines.push(`${at}: ${r.smallSvgTexts.length} of ${r.svgTexts} SVG texts under ${MIN_SVG_TEXT_PX} px, smallest ${r.smallestSvgText.px} px ("${r.smallestSvgText.text}"); first: ${r.smallSvgTexts[0]}`);
  }
  for (const c of r.cardsPastViewport) lines.push(`${at}: a card leaves the viewport: ${c}`);
  for (const w of r.brokenWords.slice(0, 8)) lines.push(`${at}: a word broken inside itself: ${w}`);
  if (r.brokenWords.length > 8) lines.push(`${at}: ${r.brokenWords.length - 8} more broken words`);
  for (const b of r.breakAll) lines.push(`${at}: word-break: break-all on ${b}`);
  return lines;
}

describe('reports read on a phone (420 px) and on a desktop (1280 px)', { skip, timeout: 240_000 }, () => {
  let dir = '';
  let sweep: SweepResult;
  const pages: Record<'report' | 'compare' | 'sweep' | 'errors', string> = { report: '', compare: '', sweep: '', errors: '' };
  let chromium: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let startedAt = 0;

  before(async () => {
    dir = tempDir('browser-phone');
    startedAt = Date.now();
    // Three real load points against the built-in simulator, with injected 500s so the reports have error tables.
    sweep = await runSweep({ maxNumRequests: 24, simFaults: '500=0.15', maxErrorRate: 1, outputDir: join(dir, 'sweep') }, { kind: 'concurrency', values: [1, 2, 4] });
    const runs = [];
    for (const p of sweep.points) runs.push(await loadRunData(p.outputDir));
    pages.compare = join(dir, 'compare.html');
    writeFileSync(pages.compare, renderCompareHtml(runs));
    pages.report = join(sweep.points.at(-1)!.outputDir, 'report.html');
    pages.sweep = sweep.files.html;
    // A server's own words in its errors (prose, not the simulator's short message) and a long model name.
    const errors = join(dir, 'errors');
    mkdirSync(errors);
    const text = ': Service Unavailable, the upstream connection was refused';
    writeRunDir(errors, syntheticRecords({ text, failEvery: 3 }), { model: 'meta-llama/Llama-3.3-70B-Instruct-FP8-dynamic', config: { numClients: 3, url: 'http://gpu-node-17.cluster.internal:8000/v1' } });
    pages.errors = (await writeRunReports(errors, { html: true })).html!;
    chromium = await launchChromium();
  }, { timeout: 150_000 });

  after(async () => {
    await chromium?.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  /** Opens `path` in a page `width` px wide and measures it. */
  async function measured(width: number, path: string): Promise<{ page: Page; report: LayoutReport }> {
    const page = await chromium!.browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load', timeout: 20_000 });
    return { page, report: await layoutProblems(page) };
  }

  for (const width of [420, 1280]) {
    test(`at ${width} px: no sideways page scroll, tables scroll in their box, SVG text >= ${MIN_SVG_TEXT_PX} px, cards wrap, no word broken`, { timeout: 90_000 }, async () => {
      const problems: string[] = [];
      for (const [name, path] of Object.entries(pages)) {
        const { page, report } = await measured(width, path);
        problems.push(...problemsOf(name, report));
        assert.ok(report.svgTexts > 0, `${name} has charts with text`);
        if (name === 'report' || name === 'errors') assert.ok(report.cards >= 10, `${name} has its cards (${report.cards})`);
        // The sweep's table of 17 columns is wider than a phone: the check above saw it scroll inside its box.
        if (name === 'sweep' && width === 420) assert.ok(report.wideTables > 0, 'the load points table is wider than a phone');
        if (width === 420) {
          mkdirSync(OUTPUT_DIR, { recursive: true });
          await page.screenshot({ path: join(OUTPUT_DIR, `phone-${name}.png`), fullPage: true });
        }
        await page.close();
      }
      assert.deepEqual(problems, []);
    });
  }

  test('sweep.html names the server, the model and the date in its heading', { timeout: 30_000 }, async () => {
    const results = JSON.parse(readFileSync(join(sweep.points[0]!.outputDir, 'results.json'), 'utf8')) as { model: string };
    const { page } = await measured(420, pages.sweep);
    const heading = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document;
      return { title: doc.querySelector('header h1')?.textContent ?? '', sub: doc.querySelector('header .sub')?.textContent ?? '' };
    });
    await page.close();
    assert.equal(heading.title, `chatload sweep: ${results.model}`);
    assert.match(heading.sub, /server embedded simulator/);
    const date = /created (\S+)/.exec(heading.sub)?.[1];
    assert.ok(date !== undefined, `a date in "${heading.sub}"`);
    const when = Date.parse(date);
    assert.ok(when >= Math.floor(startedAt / 1000) * 1000 && when <= Date.now(), `${date} is when the sweep ran`);
    assert.equal(sweep.document.model, results.model);
    assert.equal(sweep.document.created_at, date);
  });
});
