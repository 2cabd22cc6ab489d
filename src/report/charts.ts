import * as Plot from '@observablehq/plot';
import { parseHTML } from 'linkedom';

/**
 * Charts as inline SVG, rendered at build time with @observablehq/plot on a linkedom document: the HTML report then
 * needs no script, no font and no network. Plot serializes text through the DOM, so labels and series names taken from
 * data are escaped. Every function returns an HTML string (an <svg>, or a <figure> holding a legend and an <svg>).
 */

/** One point of a line chart: x and y in the axes' units, `series` names the line (shown in the legend). */
export interface SeriesPoint {
  x: number;
  y: number;
  series: string;
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
  /** Format of y tick labels, e.g. '%' for fractions. */
  yPercent?: boolean;
  xPercent?: boolean;
  /** Fixed x domain [min, max], e.g. [0, run length] so every time chart spans the whole run. */
  xDomain?: readonly [number, number];
}

/** The categorical palette (Plot's observable10), fixed so a series keeps its colour across charts. */
export const PALETTE = ['#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#3ca951', '#ff8ab7', '#a463f2', '#97bbf5', '#9c6b4e', '#9498a0'];

// Typed loosely on purpose: the project compiles without the DOM lib; Plot only needs createElementNS and friends.
type PlotDocument = NonNullable<Plot.PlotOptions['document']>;

function newDocument(): PlotDocument {
  return parseHTML('<!doctype html><html><head></head><body></body></html>').document as unknown as PlotDocument;
}

function seriesDomain(points: ReadonlyArray<{ series: string }>, order?: readonly string[]): string[] {
  const seen = new Set<string>(order ?? []);
  for (const p of points) seen.add(p.series);
  return [...seen];
}

function baseOptions(options: ChartOptions): Plot.PlotOptions {
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
      tickFormat: options.xPercent ? '.0%' : undefined,
      domain: options.xDomain === undefined ? undefined : [...options.xDomain],
    },
    y: { label: options.yLabel, zero: options.yZero ?? true, tickFormat: options.yPercent ? '.0%' : undefined },
  };
}

function serialize(node: unknown): string {
  return (node as { outerHTML: string }).outerHTML;
}

/** Lines (one per series) with a dot on every point when `dots` is true (useful with few points, e.g. per turn). */
export function lineChart(points: readonly SeriesPoint[], options: ChartOptions & { dots?: boolean }): string {
  const domain = seriesDomain(points, options.seriesOrder);
  const marks: Plot.Markish[] = [
    Plot.lineY(points, { x: 'x', y: 'y', stroke: 'series', z: 'series', strokeWidth: 1.8 }),
  ];
  if (options.dots) marks.push(Plot.dot(points, { x: 'x', y: 'y', fill: 'series', r: 2.5 }));
  return serialize(
    Plot.plot({
      ...baseOptions(options),
      color: { domain, range: PALETTE, legend: domain.length > 1 },
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
  const range = ['#9498a0', ...PALETTE];
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
      color: { domain, range: PALETTE, legend: true },
      marks: [Plot.rectY(bars, { x1: 'x1', x2: 'x2', y: 'y', fill: 'series', insetLeft: 0.5, insetRight: 0.5 }), Plot.ruleY([0])],
    }),
  );
}

/** Mark names (aria-label of a mark's <g>) that draw data: the browser test looks for these inside each chart. */
export const DATA_MARK_LABELS = ['line', 'dot', 'rect'] as const;
