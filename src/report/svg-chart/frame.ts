import { escapeHtml } from '../html-util.js';
import type { Frame } from './axes.js';

/** The class every chart's elements are styled by (its own, so the page's CSS and the charts' never clash). */
const CLASS = 'svgc';

/** The SVG's own style: it scales down to its container's width, keeping its aspect ratio (as Plot's did). */
const SVG_STYLE = `<style>:where(.${CLASS}) { display: block; height: auto; height: intrinsic; max-width: 100%; }
:where(.${CLASS} text) { white-space: pre; }</style>`;

/** The legend's style: swatches in a wrapping row above the chart, as Plot's swatches legend. */
const LEGEND_STYLE = `<style>:where(.${CLASS}-swatches) { font-family: system-ui, sans-serif; font-size: 10px; margin-bottom: 0.5em; }
:where(.${CLASS}-swatch > svg) { margin-right: 0.5em; overflow: visible; }
:where(.${CLASS}-swatches-wrap) { display: flex; align-items: center; min-height: 33px; flex-wrap: wrap; }
:where(.${CLASS}-swatches-wrap .${CLASS}-swatch) { display: inline-flex; align-items: center; margin-right: 1em; }</style>`;

/** The smallest font size a chart draws text at, in the SVG's units: point labels (ticks and axis labels are 11). */
const SMALLEST_FONT = 10;

/**
 * The smallest size, in CSS pixels, chart text may be shown at. The SVG scales down with its box only until its smallest
 * text reaches it (a min-width); below that the chart's box scrolls sideways (issue #34: reports read on a phone).
 */
export const MIN_TEXT_PX = 8;

/**
 * The chart's `<svg>` around `body` (axes and marks): its size, a viewBox so it scales, the font (system-ui, 11 px),
 * `fill="currentColor"` so text follows the page's colour, and a min-width that keeps its text at MIN_TEXT_PX or more. With `legend` (series names and their colours, in legend
 * order), a `<figure>` holding an HTML legend of swatches above the SVG: a `span.svgc-swatch` per series, holding an
 * `<svg fill=COLOUR>` square and the name.
 */
export function chartSvg(f: Frame, body: string, legend: { names: readonly string[]; colors: readonly string[] } | null): string {
  const minWidth = Math.ceil((f.width * MIN_TEXT_PX) / SMALLEST_FONT);
  const svg =
    `<svg class="${CLASS}" width="${f.width}" height="${f.height}" viewBox="0 0 ${f.width} ${f.height}" fill="currentColor" font-family="system-ui, sans-serif" font-size="10" text-anchor="middle" style="background:transparent;font-size:11px;min-width:${minWidth}px">` +
    `${SVG_STYLE}${body}</svg>`;
  if (legend === null) return svg;
  let swatches = '';
  for (let i = 0; i < legend.names.length; i++) {
    swatches += `<span class="${CLASS}-swatch"><svg width="15" height="15" fill="${legend.colors[i]}"><rect width="100%" height="100%"/></svg>${escapeHtml(legend.names[i])}</span>`;
  }
  return `<figure class="${CLASS}-figure" style="max-width:initial"><div class="${CLASS}-swatches ${CLASS}-swatches-wrap">${LEGEND_STYLE}${swatches}</div>${svg}</figure>`;
}
