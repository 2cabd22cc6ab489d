import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scaleLinear, scaleLog } from 'd3-scale';
import { dotsAndLinesChart, integerTicks, lineChart, ninesChart, ninesX, stackedBarChart, type SeriesPoint } from '../../src/report/charts.js';
import { PALETTE, seriesColors } from '../../src/report/palette.js';

/**
 * The SVG chart writer (report/svg-chart/, through charts.ts): what a chart shows, read back from its markup as the
 * browser test and a reader would: the marks per aria-label, the ticks and their labels, the axis labels and the
 * legend. Plot drew these charts before; the same figures (its margins, tick spacing, formats) are asserted here.
 */

/** Plot's frame of a default chart: 620 × 260, margins 56 left, 16 right, 20 top, 30 bottom. */
const LEFT = 56;
const RIGHT = 604;
const TOP = 20;
const BOTTOM = 230;

const XSS = `<script>alert(1)</script>"&'`;

/** The inner markup of each `<g aria-label=NAME>` of a chart, by name (a mark's group holds no other <g>). */
function groups(svg: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of svg.matchAll(/<g [^>]*aria-label="([^"]+)"[^>]*>([\s\S]*?)<\/g>/g)) out.set(m[1]!, m[2]!);
  return out;
}

const unescape = (s: string): string => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

/** The `translate(x,y)` of each `<text>` in a group, with its (unescaped) text. */
function texts(inner: string | undefined): Array<{ x: number; y: number; text: string }> {
  return [...(inner ?? '').matchAll(/<text [^>]*transform="translate\(([-\d.]+),([-\d.]+)\)"[^>]*>([^<]*)<\/text>/g)].map((m) => ({ x: Number(m[1]), y: Number(m[2]), text: unescape(m[3]!) }));
}

/** Each line of a chart: its colour and its points (the pen lifted between runs). */
function lines(svg: string): Array<{ stroke: string; points: Array<[number, number]> }> {
  return [...(groups(svg).get('line') ?? '').matchAll(/<path d="([^"]+)" stroke="([^"]+)"\/>/g)].map((m) => ({
    stroke: m[2]!,
    points: [...m[1]!.matchAll(/[ML]([-\d.]+),([-\d.]+)/g)].map((p) => [Number(p[1]), Number(p[2])] as [number, number]),
  }));
}

function circles(svg: string): Array<{ cx: number; cy: number; fill: string | undefined }> {
  return [...(groups(svg).get('dot') ?? '').matchAll(/<circle ([^>]*)\/>/g)].map((m) => ({
    cx: Number(/cx="([^"]+)"/.exec(m[1]!)![1]),
    cy: Number(/cy="([^"]+)"/.exec(m[1]!)![1]),
    fill: /fill="([^"]+)"/.exec(m[1]!)?.[1],
  }));
}

/** The legend: each swatch's name and colour, in order. */
function legend(html: string): Array<{ name: string; color: string }> {
  return [...html.matchAll(/<span class="[^"]*-swatch"><svg [^>]*fill="([^"]+)"[^>]*>[\s\S]*?<\/svg>([^<]*)<\/span>/g)].map((m) => ({ name: unescape(m[2]!), color: m[1]! }));
}

const tickLabels = (svg: string, axis: 'x' | 'y'): string[] => texts(groups(svg).get(`${axis}-axis tick label`)).map((t) => t.text);
const axisLabel = (svg: string, axis: 'x' | 'y'): string => texts(groups(svg).get(`${axis}-axis label`))[0]!.text;

/** Points of `series`, n each, x = 1..n. */
function points(series: readonly string[], n: number, y: (i: number, s: number) => number): SeriesPoint[] {
  return series.flatMap((name, s) => Array.from({ length: n }, (_, i) => ({ x: i + 1, y: y(i, s), series: name, label: `#${i}` })));
}

const near = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) < 0.02, `${what}: ${a} ≈ ${b}`);

describe('charts: line charts', () => {
  test('one path per series, one dot per point, in palette colours; every point inside the plot area, in x order', () => {
    const svg = lineChart(points(['p50', 'p90', 'p99'], 8, (i, s) => 10 * i + 5 * s + 3), { xLabel: 'turn', xIntegers: true, yLabel: 'TTFT (ms)', dots: true, seriesOrder: ['p50', 'p90', 'p99'] });
    const drawn = lines(svg);
    assert.deepEqual(
      drawn.map((l) => l.stroke),
      seriesColors(['p50', 'p90', 'p99']),
    );
    for (const line of drawn) {
      assert.equal(line.points.length, 8);
      for (let i = 0; i < line.points.length; i++) {
        const [x, y] = line.points[i]!;
        assert.ok(x >= LEFT && x <= RIGHT && y >= TOP && y <= BOTTOM, `(${x}, ${y}) inside the plot area`);
        if (i > 0) assert.ok(x > line.points[i - 1]![0], 'x order');
      }
    }
    // The domain is not niced: the first turn is at the left edge, the last at the right, the highest y at the top.
    near(drawn[0]!.points[0]![0], LEFT, 'first x');
    near(drawn[0]!.points[7]![0], RIGHT, 'last x');
    near(drawn[2]!.points[7]![1], TOP, 'highest y');
    assert.equal(circles(svg).length, 24);
    assert.equal(groups(svg).get('text'), undefined, 'no point labels unless asked');
  });

  test('y includes 0 by default (yZero false starts at the data), ticks are d3 ticks with their labels', () => {
    const data = points(['p50'], 10, (i) => 100 + 10 * i);
    const zero = lineChart(data, { xLabel: 'x', yLabel: 'y' });
    const yCount = (BOTTOM - TOP) / 35;
    const xCount = (RIGHT - LEFT) / 80;
    const expectY = (lo: number, hi: number): string[] => {
      const s = scaleLinear().domain([lo, hi]);
      const f = s.tickFormat(yCount);
      return s.ticks(yCount).map((t) => f(t));
    };
    assert.deepEqual(tickLabels(zero, 'y'), expectY(0, 190));
    assert.equal(tickLabels(zero, 'y')[0], '0');
    const bottomTick = texts(groups(zero).get('y-axis tick label'))[0]!;
    near(bottomTick.y, BOTTOM, 'y = 0 at the bottom');
    const noZero = lineChart(data, { xLabel: 'x', yLabel: 'y', yZero: false });
    assert.deepEqual(tickLabels(noZero, 'y'), expectY(100, 190));
    const xs = scaleLinear().domain([1, 10]);
    assert.deepEqual(tickLabels(zero, 'x'), xs.ticks(xCount).map((t) => xs.tickFormat(xCount)(t)));
    // A tick mark and a grid line per tick.
    assert.equal((groups(zero).get('x-axis tick')!.match(/<path/g) ?? []).length, tickLabels(zero, 'x').length);
    assert.equal((groups(zero).get('y-grid')!.match(/<line/g) ?? []).length, tickLabels(zero, 'y').length);
  });

  test('axis labels carry arrows where values grow; thousands have commas', () => {
    const svg = lineChart(points(['only'], 5, (i) => 1000 * i), { xLabel: 'send time (s)', yLabel: 'tokens' });
    assert.equal(axisLabel(svg, 'y'), '↑ tokens');
    assert.equal(axisLabel(svg, 'x'), 'send time (s) →');
    assert.ok(tickLabels(svg, 'y').includes('4,000'), tickLabels(svg, 'y').join(' '));
  });

  test('yPercent and xPercent label fractions as whole percents', () => {
    const svg = lineChart(
      points(['TTFT'], 11, (i) => i / 10).map((p) => ({ ...p, x: p.y / 2 })),
      { xLabel: 'share', xPercent: true, yLabel: 'fraction', yPercent: true },
    );
    assert.deepEqual(tickLabels(svg, 'y'), ['0%', '20%', '40%', '60%', '80%', '100%']);
    assert.ok(tickLabels(svg, 'x').every((t) => /^\d+%$/.test(t)) && tickLabels(svg, 'x').includes('50%'), tickLabels(svg, 'x').join(' '));
  });

  test('xIntegers: ticks only at whole numbers, never 1.5', () => {
    const svg = lineChart(points(['p50'], 3, (i) => i), { xLabel: 'turn', xIntegers: true, yLabel: 'ms', dots: true });
    assert.deepEqual(tickLabels(svg, 'x'), ['1', '2', '3']);
    const many = lineChart(points(['p50'], 40, (i) => i), { xLabel: 'turn', xIntegers: true, yLabel: 'ms' });
    assert.deepEqual(tickLabels(many, 'x'), integerTicks(Array.from({ length: 40 }, (_, i) => i + 1)).map(String));
    assert.ok(tickLabels(many, 'x').every((t) => /^\d+$/.test(t)));
  });

  test('log axes: d3 log ticks, some left blank, labelled in ~s (1k, 10k)', () => {
    const data = Array.from({ length: 50 }, (_, i) => ({ x: 10 ** (i / 10), y: i / 49, series: 'TTFT' }));
    const svg = lineChart(data, { xLabel: 'TTFT (ms, log)', yLabel: 'fraction', yPercent: true, xLog: true });
    const count = (RIGHT - LEFT) / 80;
    const s = scaleLog().domain([1, 10 ** 4.9]);
    const expected = s
      .ticks(count)
      .map((t) => s.tickFormat(count, '~s')(t))
      .filter((l) => l !== '');
    assert.deepEqual(tickLabels(svg, 'x'), expected);
    for (const label of ['1', '10', '100', '1k', '10k']) assert.ok(tickLabels(svg, 'x').includes(label), `${label} in ${tickLabels(svg, 'x').join(' ')}`);
    // Each of d3's ticks has its mark, labelled or not.
    assert.equal((groups(svg).get('x-axis tick')!.match(/<path/g) ?? []).length, s.ticks(count).length);
    const yLog = lineChart(points(['p50', 'p90'], 8, (i, k) => 10 ** (i / 2) + k), { xLabel: 'x', yLabel: 'ms', yLog: true, yZero: false });
    assert.ok(tickLabels(yLog, 'y').includes('1k'), tickLabels(yLog, 'y').join(' '));
    for (const line of lines(yLog)) for (const [, y] of line.points) assert.ok(y >= TOP - 0.01 && y <= BOTTOM + 0.01);
  });

  test('xDomain fixes the x axis: points keep their place on it', () => {
    const svg = lineChart(points(['only'], 10, (i) => i), { xLabel: 'time (s)', yLabel: 'requests/s', xDomain: [0, 20] });
    const [line] = lines(svg);
    near(line!.points[0]![0], LEFT + (RIGHT - LEFT) / 20, 'x = 1 of 0..20');
    near(line!.points[9]![0], LEFT + (RIGHT - LEFT) / 2, 'x = 10 of 0..20');
    assert.equal(tickLabels(svg, 'x').at(-1), '20');
  });

  test('legend: seriesOrder first, palette colours by name; one series gets none', () => {
    const data = [...points(['cached (server)'], 3, (i) => i), ...points(['input tokens', 'expected cached'], 3, (i) => i)];
    const html = lineChart(data, { xLabel: 'turn', yLabel: 'tokens', seriesOrder: ['input tokens', 'expected cached', 'cached (server)'] });
    assert.deepEqual(legend(html), [
      { name: 'input tokens', color: '#97bbf5' },
      { name: 'expected cached', color: '#9498a0' },
      { name: 'cached (server)', color: '#3ca951' },
    ]);
    // Lines are drawn in order of first appearance, each in its legend colour.
    assert.deepEqual(
      lines(html).map((l) => l.stroke),
      ['#3ca951', '#97bbf5', '#9498a0'],
    );
    // Unnamed series (run labels) take the palette in the order given.
    const runs = lineChart(points(['run-b', 'run-a'], 2, (i) => i), { xLabel: 'x', yLabel: 'y', seriesOrder: ['run-a', 'run-b'] });
    assert.deepEqual(legend(runs), [
      { name: 'run-a', color: PALETTE[0] },
      { name: 'run-b', color: PALETTE[1] },
    ]);
    const single = lineChart(points(['only'], 3, (i) => i), { xLabel: 'x', yLabel: 'y' });
    assert.deepEqual(legend(single), []);
    assert.ok(single.startsWith('<svg'), 'no figure around a chart without a legend');
  });

  test('dotsOnly series get dots and no line; pointLabels write each label 9 px above its point', () => {
    const data = points(['Pareto front', 'load points'], 4, (i, s) => 100 - 10 * i + s);
    const svg = lineChart(data, { xLabel: 'x', yLabel: 'y', dots: true, pointLabels: true, dotsOnly: ['load points'], seriesOrder: ['Pareto front', 'load points'], width: 1100, height: 340 });
    assert.equal(lines(svg).length, 1);
    assert.equal(lines(svg)[0]!.stroke, PALETTE[0]);
    assert.equal(circles(svg).length, 8);
    const labels = texts(groups(svg).get('text'));
    assert.equal(labels.length, 8);
    assert.deepEqual(
      labels.map((l) => l.text),
      data.map((p) => p.label),
    );
    assert.match(svg, /aria-label="text"/);
    assert.match(svg, /font-size="10" transform="translate\(0,-9\)"/);
    // More room on top for the labels: the y axis label sits at the top margin of 28.
    assert.equal(texts(groups(svg).get('y-axis label'))[0]!.y, 28);
    assert.match(svg, /viewBox="0 0 1100 340"/);
  });

  test('hostile series names, labels and axis labels come out escaped', () => {
    const data = points([`a${XSS}`, 'b'], 3, (i) => i).map((p) => ({ ...p, label: `L${XSS}` }));
    const html = lineChart(data, { xLabel: `x${XSS}`, yLabel: `y${XSS}`, dots: true, pointLabels: true });
    assert.doesNotMatch(html, /<script/);
    assert.ok(!html.includes(`"&'`), 'no raw quote or ampersand from data');
    assert.equal(legend(html)[0]!.name, `a${XSS}`);
    assert.equal(axisLabel(html, 'x'), `x${XSS} →`);
    assert.equal(axisLabel(html, 'y'), `↑ y${XSS}`);
    assert.ok(texts(groups(html).get('text')).every((t) => t.text === `L${XSS}`));
  });

  test('an empty chart and a one-point chart do not throw', () => {
    const empty = lineChart([], { xLabel: 'turn', yLabel: 'ms', dots: true });
    assert.match(empty, /^<svg [^>]*viewBox="0 0 620 260"/);
    assert.deepEqual(tickLabels(empty, 'x'), []);
    assert.equal(axisLabel(empty, 'x'), 'turn', 'no arrow on an axis without values');
    const one = lineChart([{ x: 3, y: 7, series: 'p50' }], { xLabel: 'turn', xIntegers: true, yLabel: 'ms', dots: true });
    // A single point sits mid-axis; its line is a closed dot-sized path.
    assert.match(groups(one).get('line')!, /d="M330,20Z"/);
    assert.deepEqual(tickLabels(one, 'x'), ['3']);
    assert.doesNotThrow(() => ninesChart([], { yLabel: 'ms (log)' }));
    assert.doesNotThrow(() => stackedBarChart([], { xLabel: 't', yLabel: 'n' }));
    assert.doesNotThrow(() => dotsAndLinesChart([], [], { xLabel: 't', yLabel: 'ms', dotLabel: 'request' }));
  });

  test('values a log axis cannot show (≤ 0) break the line instead of drawing off the chart', () => {
    const data = [1, 10, 0, 100, 1000].map((y, i) => ({ x: i + 1, y, series: 'p50' }));
    const svg = lineChart(data, { xLabel: 'x', yLabel: 'ms', yLog: true, dots: true });
    const d = /d="([^"]+)"/.exec(groups(svg).get('line')!)![1]!;
    assert.equal(d.split('M').length - 1, 2, `two runs: ${d}`);
    assert.equal(circles(svg).length, 4);
  });
});

describe('charts: the other kinds', () => {
  test('dotsAndLinesChart: a dot per observation in the dot colour and opacity under the percentile lines', () => {
    const dots = Array.from({ length: 200 }, (_, i) => ({ x: i / 10, y: 50 + (i % 17) }));
    const html = dotsAndLinesChart(dots, points(['p50', 'p90'], 20, (i, s) => 55 + i / 2 + 5 * s), { xLabel: 'send time (s)', xDomain: [0, 20], yLabel: 'TTFT (ms)', dotLabel: 'request', seriesOrder: ['p50', 'p90'] });
    assert.equal(circles(html).length, 200);
    assert.match(html, /<g fill="#9498a0" fill-opacity="0.35" aria-label="dot">/);
    assert.deepEqual(legend(html), [
      { name: 'request', color: '#9498a0' },
      { name: 'p50', color: '#4269d0' },
      { name: 'p90', color: '#efb118' },
    ]);
    assert.equal(lines(html).length, 2);
    // The dots come first, so the lines are drawn over them.
    assert.ok(html.indexOf('aria-label="dot"') < html.indexOf('aria-label="line"'));
    for (const c of circles(html)) assert.ok(c.cx >= LEFT && c.cx <= RIGHT && c.cy >= TOP && c.cy <= BOTTOM);
  });

  test('stackedBarChart: one rect per bar, stacked per interval from a rule at 0, inset 0.5 px each side', () => {
    const bars = [0, 1, 2, 3].flatMap((b) => [
      { x1: b, x2: b + 1, y: b + 1, series: 'http_5xx' },
      { x1: b, x2: b + 1, y: 2, series: 'timeout' },
    ]);
    const html = stackedBarChart(bars, { xLabel: 'end time (s)', xDomain: [0, 4], yLabel: 'failed requests' });
    const rects = [...groups(html).get('rect')!.matchAll(/<rect x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)" fill="([^"]+)"\/>/g)].map((m) => ({
      x: Number(m[1]),
      y: Number(m[2]),
      width: Number(m[3]),
      height: Number(m[4]),
      fill: m[5]!,
    }));
    assert.equal(rects.length, 8);
    const bin = (RIGHT - LEFT) / 4;
    const unit = (BOTTOM - TOP) / 6; // the tallest stack is 4 + 2
    for (let b = 0; b < 4; b++) {
      const [low, high] = [rects[2 * b]!, rects[2 * b + 1]!];
      near(low.x, LEFT + b * bin + 0.5, `bar ${b} x`);
      near(low.width, bin - 1, `bar ${b} width`);
      near(low.y + low.height, BOTTOM, `bar ${b} stands on 0`);
      near(low.height, (b + 1) * unit, `bar ${b} height`);
      near(high.y + high.height, low.y, `bar ${b}'s second part stacks on the first`);
    }
    assert.deepEqual(legend(html), [
      { name: 'http_5xx', color: rects[0]!.fill },
      { name: 'timeout', color: rects[1]!.fill },
    ]);
    assert.match(groups(html).get('rule')!, new RegExp(`<line x1="${LEFT}" x2="${RIGHT}" y1="${BOTTOM}" y2="${BOTTOM}"/>`));
    assert.deepEqual(tickLabels(html, 'y'), ['0', '1', '2', '3', '4', '5', '6']);
  });

  test('ninesChart: p50 p90 p99 … ticks equally spaced up to the data, y on a log axis', () => {
    const data = ['TTFT', 'ITL'].flatMap((series, s) => Array.from({ length: 40 }, (_, i) => ({ x: ninesX(50) + (i / 39) * (ninesX(99.9) - ninesX(50)), y: 1 + i * (s + 1) * 30, series })));
    const html = ninesChart(data, { yLabel: 'ms (log)', seriesOrder: ['TTFT', 'TPOT', 'ITL'] });
    assert.deepEqual(tickLabels(html, 'x'), ['p50', 'p90', 'p99', 'p99.9']);
    const xs = texts(groups(html).get('x-axis tick label')).map((t) => t.x);
    near(xs[2]! - xs[1]!, xs[3]! - xs[2]!, 'p90-p99 and p99-p99.9 are equally spaced');
    assert.equal(axisLabel(html, 'x'), 'percentile →');
    assert.equal(axisLabel(html, 'y'), '↑ ms (log)');
    assert.ok(tickLabels(html, 'y').includes('1k'), tickLabels(html, 'y').join(' '));
    assert.deepEqual(legend(html), [
      { name: 'TTFT', color: '#4269d0' },
      { name: 'ITL', color: '#6cc5b0' },
    ]);
    assert.equal(lines(html).length, 2);
    // Fewer nines in the data, fewer ticks: never fewer than p50 and p90.
    const short = ninesChart([{ x: ninesX(50), y: 5, series: 'TTFT' }, { x: ninesX(80), y: 9, series: 'TTFT' }], { yLabel: 'ms' });
    assert.deepEqual(tickLabels(short, 'x'), ['p50', 'p90']);
  });

  test('the SVG scales with its container, takes the page colour, and holds no script or external resource', () => {
    const html = lineChart(points(['p50', 'p90'], 3, (i) => i), { xLabel: 'x', yLabel: 'y' });
    assert.match(html, /<svg class="svgc" width="620" height="260" viewBox="0 0 620 260" fill="currentColor" font-family="system-ui, sans-serif"/);
    assert.match(html, /max-width: 100%/);
    assert.doesNotMatch(html, /<script|href=|src=|url\(/);
  });
});
