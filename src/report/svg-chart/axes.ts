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
  let out = '';
  if (y.ticks.length > 0) {
    let grid = '';
    let marks = '';
    let labels = '';
    for (let i = 0; i < y.ticks.length; i++) {
      const at = px(y.scale.at(y.ticks[i]!));
      grid += `<line x1="${f.left}" x2="${right}" y1="${at}" y2="${at}"/>`;
      marks += `<path transform="translate(${f.left},${at})" d="M0,0L-${TICK},0"/>`;
      labels += y.labels[i] === '' ? '' : `<text transform="translate(${f.left},${at})" y="0.32em">${escapeHtml(y.labels[i])}</text>`;
    }
    out +=
      `<g stroke="currentColor" stroke-opacity="0.1" aria-hidden="true" aria-label="y-grid">${grid}</g>` +
      `<g fill="none" stroke="currentColor" aria-hidden="true" aria-label="y-axis tick">${marks}</g>` +
      `<g text-anchor="end" font-variant="tabular-nums" transform="translate(-${TICK + PADDING},0)" aria-label="y-axis tick label">${labels}</g>`;
  }
  const yLabel = y.scale.direction === 0 || ARROW.test(y.label) ? y.label : `↑ ${y.label}`;
  out += `<g text-anchor="start" transform="translate(${3 - f.left},${3 - f.top})" aria-label="y-axis label"><text transform="translate(${f.left},${f.top})" y="0.71em">${escapeHtml(yLabel)}</text></g>`;
  if (x.ticks.length > 0) {
    let grid = '';
    let marks = '';
    let labels = '';
    for (let i = 0; i < x.ticks.length; i++) {
      const at = px(x.scale.at(x.ticks[i]!));
      grid += `<line x1="${at}" x2="${at}" y1="${f.top}" y2="${bottom}"/>`;
      marks += `<path transform="translate(${at},${bottom})" d="M0,0L0,${TICK}"/>`;
      labels += x.labels[i] === '' ? '' : `<text transform="translate(${at},${bottom})" y="0.71em">${escapeHtml(x.labels[i])}</text>`;
    }
    out +=
      `<g stroke="currentColor" stroke-opacity="0.1" aria-hidden="true" aria-label="x-grid">${grid}</g>` +
      `<g fill="none" stroke="currentColor" aria-hidden="true" aria-label="x-axis tick">${marks}</g>` +
      `<g font-variant="tabular-nums" transform="translate(0,${TICK + PADDING})" aria-label="x-axis tick label">${labels}</g>`;
  }
  const xLabel = x.scale.direction === 0 || ARROW.test(x.label) ? x.label : `${x.label} →`;
  out += `<g text-anchor="end" transform="translate(${f.right - 3},${f.bottom - 3})" aria-label="x-axis label"><text transform="translate(${right},${bottom})">${escapeHtml(xLabel)}</text></g>`;
  return out;
}
