import { escapeHtml } from '../html-util.js';
import { px, type Frame } from './axes.js';
import type { AxisScale } from './scale.js';

/**
 * The marks that draw data, each a `<g>` named by its aria-label as Plot named it (`line`, `dot`, `text`, `rect`,
 * `rule`: the browser test counts the first three). Each is one index loop over the points appending to strings:
 * nothing per point allocates an object or a closure. A point whose position cannot be drawn (not finite, or ≤ 0 on
 * a log axis) is skipped: a line breaks there.
 */

/** A point in data units; `series` names its line and colour. */
export interface MarkPoint {
  x: number;
  y: number;
  series: string;
  label?: string;
}

/**
 * One `<path>` per series (in order of first appearance), through its points in the order given, each in its series'
 * colour. Series in `skip` get no line. A run of one point between gaps is drawn as a dot-sized closed path (`Z`),
 * as d3's line does.
 */
export function linesSvg(points: readonly MarkPoint[], skip: ReadonlySet<string>, x: AxisScale, y: AxisScale, colors: ReadonlyMap<string, string>): string {
  const index = new Map<string, number>();
  const paths: string[] = [];
  const names: string[] = [];
  /** Points in the current run of each path (0: the pen is up). */
  const run: number[] = [];
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (skip.size > 0 && skip.has(p.series)) continue;
    let s = index.get(p.series);
    if (s === undefined) {
      s = paths.length;
      index.set(p.series, s);
      paths.push('');
      names.push(p.series);
      run.push(0);
    }
    const px_ = x.at(p.x);
    const py = y.at(p.y);
    if (!Number.isFinite(px_) || !Number.isFinite(py)) {
      if (run[s] === 1) paths[s] += 'Z';
      run[s] = 0;
      continue;
    }
    paths[s] += `${run[s] === 0 ? 'M' : 'L'}${px(px_)},${px(py)}`;
    run[s]!++;
  }
  let out = '';
  for (let s = 0; s < paths.length; s++) {
    if (paths[s] === '') continue;
    out += `<path d="${paths[s]}${run[s] === 1 ? 'Z' : ''}" stroke="${colors.get(names[s]!) ?? 'currentColor'}"/>`;
  }
  return `<g fill="none" stroke-width="1.8" stroke-linejoin="round" stroke-linecap="round" aria-label="line">${out}</g>`;
}

/**
 * A circle of radius `r` at each point: filled with its series' colour from `colors`, or with none of its own when
 * `colors` is null (then `groupAttrs`, e.g. one fill and opacity for single observations, style them all).
 */
export function dotsSvg(
  points: ReadonlyArray<{ x: number; y: number; series?: string }>,
  r: number,
  x: AxisScale,
  y: AxisScale,
  colors: ReadonlyMap<string, string> | null,
  groupAttrs = '',
): string {
  let out = '';
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    const cx = x.at(p.x);
    const cy = y.at(p.y);
    if (!Number.isFinite(cx) || !Number.isFinite(cy)) continue;
    out += `<circle cx="${px(cx)}" cy="${px(cy)}" r="${r}"${colors === null ? '' : ` fill="${colors.get(p.series!) ?? 'currentColor'}"`}/>`;
  }
  return `<g ${groupAttrs}aria-label="dot">${out}</g>`;
}

/** Each labelled point's label, 9 px above it, font size 10, in its series' colour. */
export function labelsSvg(points: readonly MarkPoint[], x: AxisScale, y: AxisScale, colors: ReadonlyMap<string, string>): string {
  let out = '';
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (p.label === undefined) continue;
    const tx = x.at(p.x);
    const ty = y.at(p.y);
    if (!Number.isFinite(tx) || !Number.isFinite(ty)) continue;
    out += `<text fill="${colors.get(p.series) ?? 'currentColor'}" transform="translate(${px(tx)},${px(ty)})" y="0.32em">${escapeHtml(p.label)}</text>`;
  }
  return `<g font-size="10" transform="translate(0,-9)" aria-label="text">${out}</g>`;
}

/** A bar of a stacked bar chart, data units. */
export interface MarkBar {
  x1: number;
  x2: number;
  y: number;
  series: string;
}

/**
 * The tops (and bottoms, for negative values) of bars stacked on each x1, in the order given, as Plot's stackY
 * stacks them: writes bar i's base and top into `y1[i]`, `y2[i]`. Used for the y domain and for drawing.
 */
export function stack(bars: readonly MarkBar[], y1: Float64Array, y2: Float64Array): void {
  const up = new Map<number, number>();
  const down = new Map<number, number>();
  for (let i = 0; i < bars.length; i++) {
    const { x1, y } = bars[i]!;
    if (y < 0) {
      const base = down.get(x1) ?? 0;
      y1[i] = base;
      y2[i] = base + y;
      down.set(x1, base + y);
    } else {
      const base = up.get(x1) ?? 0;
      y1[i] = base;
      y2[i] = y > 0 ? base + y : base;
      up.set(x1, y2[i]!);
    }
  }
}

/** The stacked bars (from `stack`), 0.5 px in from each side so neighbours do not touch, each in its series' colour. */
export function barsSvg(bars: readonly MarkBar[], y1: Float64Array, y2: Float64Array, x: AxisScale, y: AxisScale, colors: ReadonlyMap<string, string>): string {
  let out = '';
  for (let i = 0; i < bars.length; i++) {
    const b = bars[i]!;
    const xa = x.at(b.x1);
    const xb = x.at(b.x2);
    const ya = y.at(y1[i]!);
    const yb = y.at(y2[i]!);
    if (!Number.isFinite(xa) || !Number.isFinite(xb) || !Number.isFinite(ya) || !Number.isFinite(yb)) continue;
    const width = Math.max(0, Math.abs(xb - xa) - 1);
    out += `<rect x="${px(Math.min(xa, xb) + 0.5)}" y="${px(Math.min(ya, yb))}" width="${px(width)}" height="${px(Math.abs(yb - ya))}" fill="${colors.get(b.series) ?? 'currentColor'}"/>`;
  }
  return `<g aria-label="rect">${out}</g>`;
}

/** A horizontal rule across the plot area at y = `value` (the base line of bars). */
export function ruleYSvg(value: number, y: AxisScale, f: Frame): string {
  const at = y.at(value);
  if (!Number.isFinite(at)) return '';
  return `<g stroke="currentColor" aria-label="rule"><line x1="${f.left}" x2="${f.width - f.right}" y1="${px(at)}" y2="${px(at)}"/></g>`;
}
