import * as Plot from '@observablehq/plot';
import { seriesColors } from './palette.js';
import { MiniDocument } from './svg-document.js';

/**
 * Charts as inline SVG, rendered at build time with @observablehq/plot on a minimal DOM (svg-document.ts): the HTML report then
 * needs no script, no font and no network. Plot serializes text through the DOM, so labels and series names taken from
 * data are escaped. Every function returns an HTML string (an <svg>, or a <figure> holding a legend and an <svg>).
 */

/** One point of a line chart: x and y in the axes' units, `series` names the line (shown in the legend). */
export interface SeriesPoint {
  x: number;
  y: number;
  series: string;
  /** Text drawn beside the point when the chart labels its points (e.g. a sweep's load value). */
  label?: string;
}

/** Options shared by the charts. */
export interface ChartOptions {
  xLabel: string;
  yLabel: string;
  /** Pixels; the SVG scales down to the page width. Default 620 × 260. */
  width?: number;
  height?: number;
  /** Series names in legend order (and colour order); default: order of first appearance. */
  seriesOrder?: readonly string[];
  /** Include y = 0 in the y domain. Default true. */
  yZero?: boolean;
  /** Logarithmic x axis (values must be > 0). */
  xLog?: boolean;
  /** Logarithmic y axis (values must be > 0). */
  yLog?: boolean;
  /** Format of y tick labels, e.g. '%' for fractions. */
  yPercent?: boolean;
  xPercent?: boolean;
  /** Fixed x domain [min, max], e.g. [0, run length] so every time chart spans the whole run. */
  xDomain?: readonly [number, number];
  /** The x values are whole numbers (turns): ticks only at integers, never 1.5. */
  xIntegers?: boolean;
}


// Typed loosely on purpose: the project compiles without the DOM lib; Plot only needs createElementNS and friends.
type PlotDocument = NonNullable<Plot.PlotOptions['document']>;

/** Makes the document a chart is drawn on: one per chart. */
let documentFactory: () => unknown = () => new MiniDocument();

/** A fresh document per chart: svg-document.ts's minimal DOM, all Plot needs to draw and serialize (see there why). */
function newDocument(): PlotDocument {
  return documentFactory() as PlotDocument;
}

/**
 * Runs `render` with every chart drawn on documents from `factory` (e.g. a full DOM such as linkedom's) instead of
 * svg-document.ts's: test/report/svg-document.test.ts checks that both write the same HTML.
 */
export function withChartDocument<T>(factory: () => unknown, render: () => T): T {
  const saved = documentFactory;
  documentFactory = factory;
  try {
    return render();
  } finally {
    documentFactory = saved;
  }
}

/** The series of a chart in legend order: those of `order` that have points, then the others as they first appear. */
function seriesDomain(points: ReadonlyArray<{ series: string }>, order?: readonly string[]): string[] {
  const present = new Set(points.map((p) => p.series));
  return [...new Set([...(order ?? []).filter((s) => present.has(s)), ...present])];
}

function baseOptions(options: ChartOptions, xTicks?: number[]): Plot.PlotOptions {
  return {
    document: newDocument(),
    width: options.width ?? 620,
    height: options.height ?? 260,
    marginLeft: 56,
    marginRight: 16,
    style: { background: 'transparent', fontSize: '11px' },
    grid: true,
    x: {
      label: options.xLabel,
      type: options.xLog ? 'log' : 'linear',
      domain: options.xDomain === undefined ? undefined : [...options.xDomain],
      ticks: xTicks,
      tickFormat: options.xPercent ? '.0%' : options.xIntegers ? 'd' : options.xLog ? '~s' : undefined,
    },
    y: options.yLog
      ? { label: options.yLabel, type: 'log', tickFormat: '~s' }
      : { label: options.yLabel, zero: options.yZero ?? true, tickFormat: options.yPercent ? '.0%' : undefined },
  };
}

/** Whole-number tick values spanning `xs`, at most ~10 of them (a step of 1, 2, 5, 10, 20, ...). */
export function integerTicks(xs: readonly number[]): number[] {
  if (xs.length === 0) return [];
  const lo = Math.floor(Math.min(...xs));
  const hi = Math.ceil(Math.max(...xs));
  let step = 1;
  for (let k = 1; (hi - lo) / step > 10; k++) step = [1, 2, 5][k % 3]! * 10 ** Math.floor(k / 3);
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) ticks.push(t);
  return ticks;
}

function serialize(node: unknown): string {
  return (node as { outerHTML: string }).outerHTML;
}

/**
 * Lines (one per series) with a dot on every point when `dots` is true (useful with few points, e.g. per turn);
 * series named in `dotsOnly` get dots and no line; `pointLabels` writes each point's label above it.
 */
export function lineChart(points: readonly SeriesPoint[], options: ChartOptions & { dots?: boolean; pointLabels?: boolean; dotsOnly?: readonly string[] }): string {
  const domain = seriesDomain(points, options.seriesOrder);
  const dotsOnly = new Set(options.dotsOnly ?? []);
  const marks: Plot.Markish[] = [
    Plot.lineY(dotsOnly.size === 0 ? points : points.filter((p) => !dotsOnly.has(p.series)), { x: 'x', y: 'y', stroke: 'series', z: 'series', strokeWidth: 1.8 }),
  ];
  if (options.dots) marks.push(Plot.dot(points, { x: 'x', y: 'y', fill: 'series', r: 2.5 }));
  if (options.pointLabels) {
    marks.push(Plot.text(points.filter((p) => p.label !== undefined), { x: 'x', y: 'y', text: 'label', fill: 'series', dy: -9, fontSize: 10 }));
  }
  return serialize(
    Plot.plot({
      ...baseOptions(options, options.xIntegers ? integerTicks(points.map((p) => p.x)) : undefined),
      // Room above the highest point for its label.
      ...(options.pointLabels ? { marginTop: 28 } : {}),
      color: { domain, range: seriesColors(domain, options.seriesOrder), legend: domain.length > 1 },
      marks,
    }),
  );
}

/** Dots of single observations (e.g. each request's TTFT against its send time) under lines of per-bin percentiles. */
export function dotsAndLinesChart(
  dots: ReadonlyArray<{ x: number; y: number }>,
  lines: readonly SeriesPoint[],
  options: ChartOptions & { dotLabel: string },
): string {
  const domain = [options.dotLabel, ...seriesDomain(lines, options.seriesOrder)];
  const range = seriesColors(domain);
  return serialize(
    Plot.plot({
      ...baseOptions(options),
      color: { domain, range, legend: true },
      marks: [
        Plot.dot(dots, { x: 'x', y: 'y', r: 1.5, fill: () => options.dotLabel, fillOpacity: 0.35 }),
        Plot.lineY(lines, { x: 'x', y: 'y', stroke: 'series', z: 'series', strokeWidth: 1.8 }),
      ],
    }),
  );
}

/** One bar of a stacked bar chart over time: [x1, x2) on the x axis, `y` stacked by `series`. */
export interface StackedBar {
  x1: number;
  x2: number;
  y: number;
  series: string;
}

/** Stacked bars over intervals (e.g. failed requests per time bin, stacked by error kind). */
export function stackedBarChart(bars: readonly StackedBar[], options: ChartOptions): string {
  const domain = seriesDomain(bars, options.seriesOrder);
  return serialize(
    Plot.plot({
      ...baseOptions(options),
      color: { domain, range: seriesColors(domain, options.seriesOrder), legend: true },
      marks: [Plot.rectY(bars, { x1: 'x1', x2: 'x2', y: 'y', fill: 'series', insetLeft: 0.5, insetRight: 0.5 }), Plot.ruleY([0])],
    }),
  );
}

/** Mark names (aria-label of a mark's <g>) that draw data: the browser test looks for these inside each chart. */
export const DATA_MARK_LABELS = ['line', 'dot', 'rect'] as const;

/** The nines a percentile plot marks on its x axis: p50, p90, p99, p99.9, p99.99, p99.999. */
const NINES = [50, 90, 99, 99.9, 99.99, 99.999] as const;

/** x position of percentile p on the "nines" axis: -log10(1 - p/100), so p90 is 1, p99 is 2, p99.9 is 3. */
export function ninesX(p: number): number {
  return -Math.log10(1 - p / 100);
}

/**
 * A percentile plot as HdrHistogram draws it: the value at each percentile against a "nines" x axis (p50, p90, p99,
 * p99.9 equally spaced), y logarithmic, so the body and the tail are both readable. Points: x = ninesX(p).
 */
export function ninesChart(points: readonly SeriesPoint[], options: Omit<ChartOptions, 'xLabel'>): string {
  const domain = seriesDomain(points, options.seriesOrder);
  const maxX = Math.max(...points.map((p) => p.x), ninesX(90));
  const ticks = NINES.map(ninesX).filter((x) => x <= maxX + 1e-9);
  const base = baseOptions({ ...options, xLabel: 'percentile', yLog: true });
  return serialize(
    Plot.plot({
      ...base,
      x: { label: 'percentile', ticks, tickFormat: (x: number) => `p${Number((100 * (1 - 10 ** -x)).toPrecision(6))}` },
      color: { domain, range: seriesColors(domain, options.seriesOrder), legend: domain.length > 1 },
      marks: [Plot.lineY(points, { x: 'x', y: 'y', stroke: 'series', z: 'series', strokeWidth: 1.8 })],
    }),
  );
}
