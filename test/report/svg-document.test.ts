import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseHTML } from 'linkedom';
import { dotsAndLinesChart, lineChart, ninesChart, ninesX, stackedBarChart, withChartDocument, type SeriesPoint } from '../../src/report/charts.js';
import { renderCompareHtml } from '../../src/report/compare.js';
import { escapeHtml } from '../../src/report/html-util.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { MiniDocument } from '../../src/report/svg-document.js';
import { loadRunData } from '../../src/store/run-data.js';
import { XSS, syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * The charts are drawn on svg-document.ts's minimal DOM. linkedom (a full DOM, what they were drawn on before) is the
 * oracle here: the same chart drawn on both must serialize to the same HTML, byte for byte.
 */
const linkedomDocument = (): unknown => parseHTML('<!doctype html><html><head></head><body></body></html>').document;

function bothWays(render: () => string): { mini: string; full: string } {
  return { mini: render(), full: withChartDocument(linkedomDocument, render) };
}

function assertSame(name: string, render: () => string): string {
  const { mini, full } = bothWays(render);
  assert.ok(mini.includes('<svg'), `${name}: drew an svg`);
  assert.equal(mini, full, `${name}: the minimal DOM writes what linkedom writes`);
  return mini;
}

/** Series names and labels taken from data (run labels, load values) can hold anything. */
const hostile = (name: string): string => `${name}${XSS}&amp; &nbsp;\u00a0'`;

function points(series: readonly string[], n: number, f: (i: number, s: number) => number): SeriesPoint[] {
  return series.flatMap((name, s) => Array.from({ length: n }, (_, i) => ({ x: i + 1, y: f(i, s), series: name, label: `${name} #${i}` })));
}

describe('svg-document: Plot on the minimal DOM', { timeout: 60_000 }, () => {
  test('every kind of chart, with every option the report uses, is written as linkedom wrote it', () => {
    const two = [hostile('run A'), hostile('run B')];
    assertSame('lines with dots and integer turns', () => lineChart(points(two, 6, (i, s) => 10 * i + s), { xLabel: 'turn', xIntegers: true, yLabel: 'TTFT (ms)', dots: true, seriesOrder: two }));
    assertSame('one series, no legend', () => lineChart(points(['only'], 30, (i) => i * i), { xLabel: 'time (s)', yLabel: 'requests/s', xDomain: [0, 40] }));
    assertSame('log x, percent y (a CDF)', () => lineChart(points(['TTFT'], 50, (i) => i / 49).map((p) => ({ ...p, x: 2 ** (p.x / 4) })), { xLabel: 'TTFT (ms, log)', yLabel: 'fraction', yPercent: true, xLog: true }));
    assertSame('log y, percent x, no zero', () => lineChart(points(two, 8, (i, s) => 10 ** (i / 3) + s), { xLabel: 'share', xPercent: true, yLabel: 'ms', yLog: true, yZero: false }));
    const labelled = assertSame('point labels and a dots-only series', () =>
      lineChart(points(['Pareto front', hostile('load points')], 5, (i, s) => 100 - 7 * i + s), {
        xLabel: 'x',
        yLabel: 'y',
        dots: true,
        pointLabels: true,
        dotsOnly: [hostile('load points')],
        width: 1100,
        height: 340,
      }),
    );
    assert.doesNotMatch(labelled, /<script|<img/i, 'labels and series names from data are escaped');
    assert.ok(labelled.includes(escapeHtml('<script>')), 'the payload shows as text');
    assertSame('dots under lines', () =>
      dotsAndLinesChart(
        Array.from({ length: 200 }, (_, i) => ({ x: i / 10, y: 50 + ((i * 37) % 23) })),
        points(['p50', 'p90'], 20, (i, s) => 55 + s * 10 + (i % 3)),
        { xLabel: 'send time (s)', yLabel: 'TTFT (ms)', dotLabel: 'request', seriesOrder: ['p50', 'p90'], xDomain: [0, 21] },
      ),
    );
    assertSame('stacked bars', () =>
      stackedBarChart(
        ['timeout', hostile('http_status')].flatMap((series, s) => Array.from({ length: 10 }, (_, i) => ({ x1: i, x2: i + 1, y: (i + s) % 4, series }))),
        { xLabel: 'end time (s)', yLabel: 'failed requests' },
      ),
    );
    assertSame('percentile plot (nines axis)', () =>
      ninesChart(
        ['TTFT', 'ITL'].flatMap((series, s) => Array.from({ length: 40 }, (_, i) => ({ x: ninesX(50) + (i / 39) * 3, y: 1 + i * (s + 1), series }))),
        { yLabel: 'ms (log)', seriesOrder: ['TTFT', 'ITL'] },
      ),
    );
  });

  test("a whole run's report and a comparison page are the same as linkedom wrote them", async () => {
    const dir = tempDir('svg-document');
    const other = tempDir('svg-document-b');
    try {
      writeRunDir(dir, syntheticRecords({ text: XSS, conversations: 8, turns: 5 }), { model: `model${XSS}` });
      writeRunDir(other, syntheticRecords({ conversations: 8, turns: 5, latencyScale: 1.5 }));
      const run = await loadRunData(dir);
      const html = assertSame('report.html', () => renderHtmlReport(run));
      assert.match(html, /data-chart="errors-over-time"/, 'the fixture draws the error bars too');
      assertSame('compare.html', () => renderCompareHtml([run, { ...run, label: hostile('b') }]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('svg-document: the DOM itself', () => {
  test('styles, attributes, text, insertion and serialization', () => {
    const doc = new MiniDocument();
    const figure = doc.createElement('FIGURE');
    figure.className = 'a';
    figure.style.maxWidth = 'initial';
    (figure.style as { setProperty(n: string, v: string): void }).setProperty('font-size', '11px');
    (figure.style as { removeProperty(n: string): void }).removeProperty('max-width');
    const svg = doc.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('width', 10);
    svg.setAttribute('height', '"5"');
    svg.setAttribute('width', 20); // keeps its first place
    svg.append(doc.createElementNS('http://www.w3.org/2000/svg', 'g'));
    const css = doc.createElement('style');
    css.textContent = '.a > svg { fill: red }';
    figure.append(svg, 'x < y & z');
    figure.insertBefore(css, figure.querySelector('*'));
    assert.equal(figure.tagName, 'FIGURE');
    assert.equal(figure.textContent, '.a > svg { fill: red }x < y & z');
    assert.equal(
      figure.outerHTML,
      '<figure style="font-size:11px" class="a"><style>.a > svg { fill: red }</style><svg height="&quot;5&quot;" width="20"><g /></svg>x &lt; y &amp; z</figure>',
    );
    svg.remove();
    assert.equal(svg.parentNode, null);
    assert.deepEqual(figure.children.map((e) => e.localName), ['style']);
    (figure.style as { removeProperty(n: string): void }).removeProperty('font-size');
    assert.equal(figure.outerHTML.startsWith('<figure class="a">'), true, 'an empty style attribute is left out');
    assert.throws(() => figure.querySelector('.a > svg'), /unsupported selector/);
    // A style set as text, then changed property by property.
    const div = doc.createElement('div');
    (div as unknown as { style: unknown }).style = 'color: red; margin-left: 2px';
    div.style.marginLeft = null;
    div.style.fontSize = '9px';
    assert.equal(div.outerHTML, '<div style="color:red;font-size:9px"></div>');
  });
});
