import { seriesColors } from './palette.js';
import { axesSvg, type Axis, type Frame } from './svg-chart/axes.js';
import { chartSvg } from './svg-chart/frame.js';
import { barsSvg, dotsSvg, labelsSvg, linesSvg, ruleYSvg, stack } from './svg-chart/marks.js';
import { AxisScale, Extent } from './svg-chart/scale.js';

/**
 * Charts as inline SVG, written at build time as strings (svg-chart/: scale, axes, marks, frame): the HTML report then
 * needs no script, no font and no network. Text from data (series names, labels, axis labels) is escaped. Every
 * function returns an HTML string (an <svg>, or a <figure> holding a legend and an <svg>).
 *
 * Hand-written on purpose (issue 17), in place of @observablehq/plot drawing on a DOM: at 1,000 requests Plot cost
 * ~120-190 ms of main-thread CPU to import and render once, plus ~90-150 ms of TurboFan compiling 30-40 of its and
 * d3's functions, ~0.15x of chatload's all-in CPU ratio for four kinds of chart (now ~50 ms and 3 small compiles).
 * The charts look as Plot drew them (its margins, tick counts, grid, labels, colours and sizes); ticks and their
 * labels still come from d3-scale/d3-format.
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

/** Plot's margins as the charts used them: 56 px left for tick labels, 16 right, 20 top, 30 bottom for the x axis. */
function frameOf(options: ChartOptions, top = 20): Frame {
  return { width: options.width ?? 620, height: options.height ?? 260, top, right: 16, bottom: 30, left: 56 };
}

/** About one x tick per 80 px and one y tick per 35 px of the plot area (Plot's tick spacing). */
function xTickCount(f: Frame): number {
  return (f.width - f.right - f.left) / 80;
}

function yTickCount(f: Frame): number {
  return (f.height - f.bottom - f.top) / 35;
}

/** The x scale over `extent` (or the fixed `xDomain`), left to right. */
function xScaleOf(extent: Extent, options: ChartOptions, f: Frame): AxisScale {
  const [lo, hi] = options.xDomain ?? extent.domain();
  return new AxisScale(options.xLog === true, lo, hi, f.left, f.width - f.right);
}

/** The y scale over `extent`, bottom to top; a linear one includes 0 unless `yZero` is false. Scales are not niced. */
function yScaleOf(extent: Extent, options: ChartOptions, f: Frame): AxisScale {
  if (!options.yLog && (options.yZero ?? true) && Number.isFinite(extent.lo)) extent.add(0);
  const [lo, hi] = extent.domain();
  return new AxisScale(options.yLog === true, lo, hi, f.height - f.bottom, f.top);
}

/** The x axis: d3's ticks (or `explicit` ones) and labels in the chart's format (percent, integers, or `~s` on log). */
function xAxisOf(scale: AxisScale, options: ChartOptions, f: Frame, explicit?: number[]): Axis {
  const count = xTickCount(f);
  const ticks = explicit ?? scale.ticks(count);
  const spec = options.xPercent ? '.0%' : options.xIntegers ? 'd' : options.xLog ? '~s' : undefined;
  return { scale, ticks, labels: scale.labels(ticks, explicit === undefined ? count : null, spec), label: options.xLabel };
}

function yAxisOf(scale: AxisScale, options: ChartOptions, f: Frame): Axis {
  const count = yTickCount(f);
  const ticks = scale.ticks(count);
  const spec = options.yLog ? '~s' : options.yPercent ? '.0%' : undefined;
  return { scale, ticks, labels: scale.labels(ticks, count, spec), label: options.yLabel };
}

/** The series of a chart in legend order: those of `order` that have points, then the others as they first appear. */
function seriesDomain(points: ReadonlyArray<{ series: string }>, order?: readonly string[]): string[] {
  const present = new Set<string>();
  for (let i = 0; i < points.length; i++) present.add(points[i]!.series);
  return [...new Set([...(order ?? []).filter((s) => present.has(s)), ...present])];
}

/** Adds the x and y values of `points` (those not in `skip`) to the extents. */
function addPoints(points: readonly SeriesPoint[], xs: Extent, ys: Extent, skip?: ReadonlySet<string>, labelled = false): void {
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (skip !== undefined && skip.size > 0 && skip.has(p.series)) continue;
    if (labelled && p.label === undefined) continue;
    xs.add(p.x);
    ys.add(p.y);
  }
}

function colorMap(domain: readonly string[], colors: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i < domain.length; i++) map.set(domain[i]!, colors[i]!);
  return map;
}

const NO_SERIES: ReadonlySet<string> = new Set();

/**
 * Lines (one per series) with a dot on every point when `dots` is true (useful with few points, e.g. per turn);
 * series named in `dotsOnly` get dots and no line; `pointLabels` writes each point's label above it.
 */
export function lineChart(points: readonly SeriesPoint[], options: ChartOptions & { dots?: boolean; pointLabels?: boolean; dotsOnly?: readonly string[] }): string {
  const domain = seriesDomain(points, options.seriesOrder);
  const colors = seriesColors(domain, options.seriesOrder);
  const byName = colorMap(domain, colors);
  const dotsOnly = options.dotsOnly === undefined ? NO_SERIES : new Set(options.dotsOnly);
  // Room above the highest point for its label.
  const f = frameOf(options, options.pointLabels ? 28 : 20);
  const xs = new Extent(options.xLog === true);
  const ys = new Extent(options.yLog === true);
  addPoints(points, xs, ys, dotsOnly);
  if (options.dots) addPoints(points, xs, ys);
  if (options.pointLabels) addPoints(points, xs, ys, undefined, true);
  const x = xScaleOf(xs, options, f);
  const y = yScaleOf(ys, options, f);
  let xTicks: number[] | undefined;
  if (options.xIntegers) {
    const values: number[] = [];
    for (let i = 0; i < points.length; i++) values.push(points[i]!.x);
    xTicks = integerTicks(values);
  }
  let body = axesSvg(xAxisOf(x, options, f, xTicks), yAxisOf(y, options, f), f) + linesSvg(points, dotsOnly, x, y, byName);
  if (options.dots) body += dotsSvg(points, 2.5, x, y, byName);
  if (options.pointLabels) body += labelsSvg(points, x, y, byName);
  return chartSvg(f, body, domain.length > 1 ? { names: domain, colors } : null);
}

/** Dots of single observations (e.g. each request's TTFT against its send time) under lines of per-bin percentiles. */
export function dotsAndLinesChart(
  dots: ReadonlyArray<{ x: number; y: number }>,
  lines: readonly SeriesPoint[],
  options: ChartOptions & { dotLabel: string },
): string {
  const domain = [options.dotLabel, ...seriesDomain(lines, options.seriesOrder)];
  const colors = seriesColors(domain);
  const f = frameOf(options);
  const xs = new Extent(options.xLog === true);
  const ys = new Extent(options.yLog === true);
  for (let i = 0; i < dots.length; i++) {
    xs.add(dots[i]!.x);
    ys.add(dots[i]!.y);
  }
  addPoints(lines, xs, ys);
  const x = xScaleOf(xs, options, f);
  const y = yScaleOf(ys, options, f);
  const body = axesSvg(xAxisOf(x, options, f), yAxisOf(y, options, f), f) + dotsSvg(dots, 1.5, x, y, null, `fill="${colors[0]!}" fill-opacity="0.35" `) + linesSvg(lines, NO_SERIES, x, y, colorMap(domain, colors));
  return chartSvg(f, body, { names: domain, colors });
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
  const colors = seriesColors(domain, options.seriesOrder);
  const f = frameOf(options);
  const y1 = new Float64Array(bars.length);
  const y2 = new Float64Array(bars.length);
  stack(bars, y1, y2);
  const xs = new Extent(options.xLog === true);
  // The rule at y = 0 is in the y domain.
  const ys = new Extent(false);
  ys.add(0);
  for (let i = 0; i < bars.length; i++) {
    xs.add(bars[i]!.x1);
    xs.add(bars[i]!.x2);
    ys.add(y1[i]!);
    ys.add(y2[i]!);
  }
  const x = xScaleOf(xs, options, f);
  const y = yScaleOf(ys, { ...options, yLog: false }, f);
  const body = axesSvg(xAxisOf(x, options, f), yAxisOf(y, options, f), f) + barsSvg(bars, y1, y2, x, y, colorMap(domain, colors)) + ruleYSvg(0, y, f);
  return chartSvg(f, body, { names: domain, colors });
}

/** Mark names (aria-label of a mark's <g>) that draw data: the browser test looks for these inside each chart. */
export const DATA_MARK_LABELS = ['line', 'dot', 'rect'] as const;

/** The nines a percentile plot marks on its x axis: p50, p90, p99, p99.9, p99.99, p99.999. */
const NINES = [50, 90, 99, 99.9, 99.99, 99.999] as const;

/** x position of percentile p on the "nines" axis: -log10(1 - p/100), so p90 is 1, p99 is 2, p99.9 is 3. */
export function ninesX(p: number): number {
  return -Math.log10(1 - p / 100);
}

/** The label of a tick of the nines axis: `p99.9` for ninesX(99.9). */
function ninesLabel(x: number): string {
  return `p${Number((100 * (1 - 10 ** -x)).toPrecision(6))}`;
}

/**
 * A percentile plot as HdrHistogram draws it: the value at each percentile against a "nines" x axis (p50, p90, p99,
 * p99.9 equally spaced), y logarithmic, so the body and the tail are both readable. Points: x = ninesX(p).
 */
export function ninesChart(points: readonly SeriesPoint[], options: Omit<ChartOptions, 'xLabel'>): string {
  const domain = seriesDomain(points, options.seriesOrder);
  const colors = seriesColors(domain, options.seriesOrder);
  const chart: ChartOptions = { ...options, xLabel: 'percentile', xLog: false, yLog: true, xDomain: undefined };
  const f = frameOf(chart);
  const xs = new Extent(false);
  const ys = new Extent(true);
  addPoints(points, xs, ys);
  const maxX = Number.isFinite(xs.hi) ? Math.max(xs.hi, ninesX(90)) : ninesX(90);
  const ticks = xs.lo <= xs.hi ? NINES.map(ninesX).filter((t) => t <= maxX + 1e-9) : [];
  const x = xScaleOf(xs, chart, f);
  const y = yScaleOf(ys, chart, f);
  const xAxis: Axis = { scale: x, ticks, labels: ticks.map(ninesLabel), label: 'percentile' };
  const body = axesSvg(xAxis, yAxisOf(y, chart, f), f) + linesSvg(points, NO_SERIES, x, y, colorMap(domain, colors));
  return chartSvg(f, body, domain.length > 1 ? { names: domain, colors } : null);
}
