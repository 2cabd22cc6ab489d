import { escapeHtml } from '../html-util.js';
import type { AxisScale } from './scale.js';

/** A chart's outer size and margins, pixels: the plot area is [left, width - right] × [top, height - bottom]. */
export interface Frame {
  width: number;
  height: number;
  top: number;
  right: number;
  bottom: number;
  left: number;
}

/** A pixel coordinate as written in the SVG: rounded to 0.01 px (finer than any screen shows; keeps the file small). */
export function px(v: number): number {
  return Math.round(v * 100) / 100;
}

/** One axis as drawn: its scale, tick values and their labels, and its label (the caption beside it). */
export interface Axis {
  scale: AxisScale;
  ticks: readonly number[];
  labels: readonly string[];
  label: string;
}

/** Tick marks are 6 px long; tick labels sit 3 px beyond them (Plot's defaults). */
const TICK = 6;
const PADDING = 3;

/** A label that already has an arrow gets no second one. */
const ARROW = /[↑↓→←]/;

/**
 * The axes of a chart, as Plot draws them with `grid: true`: for y then x, the grid (a faint line at each tick), the
 * tick marks, the tick labels and the axis label with an arrow pointing where values grow (`↑ TTFT (ms)` at the top
 * left, `send time (s) →` at the bottom right; no arrow when the domain is a single value). The aria-labels are
 * Plot's, which the tests read; each `<g>` ends with its aria-label (test/report/html-report.test.ts reads
 * `aria-label="x-axis tick label">` and what follows).
 */
export function axesSvg(x: Axis, y: Axis, f: Frame): string {
  const right = f.width - f.right;
  const bottom = f.height - f.bottom;
  const yLabel = y.scale.direction === 0 || ARROW.test(y.label) ? y.label : `↑ ${y.label}`;
  const xLabel = x.scale.direction === 0 || ARROW.test(x.label) ? x.label : `${x.label} →`;
  return (
    ticksSvg(y, 'y', f) +
    `<g text-anchor="start" transform="translate(${3 - f.left},${3 - f.top})" aria-label="y-axis label"><text transform="translate(${f.left},${f.top})" y="0.71em">${escapeHtml(yLabel)}</text></g>` +
    ticksSvg(x, 'x', f) +
    `<g text-anchor="end" transform="translate(${f.right - 3},${f.bottom - 3})" aria-label="x-axis label"><text transform="translate(${right},${bottom})">${escapeHtml(xLabel)}</text></g>`
  );
}

/** One axis' grid lines, tick marks and tick labels (none for an axis without ticks); the y axis' on the left. */
function ticksSvg(a: Axis, k: 'x' | 'y', f: Frame): string {
  if (a.ticks.length === 0) return '';
  const right = f.width - f.right;
  const bottom = f.height - f.bottom;
  let grid = '';
  let marks = '';
  let labels = '';
  for (let i = 0; i < a.ticks.length; i++) {
    const at = px(a.scale.at(a.ticks[i]!));
    const where = k === 'y' ? `${f.left},${at}` : `${at},${bottom}`;
    grid += k === 'y' ? `<line x1="${f.left}" x2="${right}" y1="${at}" y2="${at}"/>` : `<line x1="${at}" x2="${at}" y1="${f.top}" y2="${bottom}"/>`;
    marks += `<path transform="translate(${where})" d="${k === 'y' ? `M0,0L-${TICK},0` : `M0,0L0,${TICK}`}"/>`;
    // A log axis leaves some ticks unlabelled: no empty <text> for those.
    if (a.labels[i] !== '') labels += `<text transform="translate(${where})" y="${k === 'y' ? '0.32em' : '0.71em'}">${escapeHtml(a.labels[i])}</text>`;
  }
  const labelPlace = k === 'y' ? `text-anchor="end" font-variant="tabular-nums" transform="translate(-${TICK + PADDING},0)"` : `font-variant="tabular-nums" transform="translate(0,${TICK + PADDING})"`;
  return (
    `<g stroke="currentColor" stroke-opacity="0.1" aria-hidden="true" aria-label="${k}-grid">${grid}</g>` +
    `<g fill="none" stroke="currentColor" aria-hidden="true" aria-label="${k}-axis tick">${marks}</g>` +
    `<g ${labelPlace} aria-label="${k}-axis tick label">${labels}</g>`
  );
}
