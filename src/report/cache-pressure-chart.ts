import type { CachePressureKnee, CachePressurePoint } from '../metrics/cache-pressure.js';
import { lineChart, type SeriesPoint } from './charts.js';
import { chartFigure, fmtNum } from './html-util.js';

/**
 * The cache-pressure chart of `sweep --cache-pressure`: the server's prefix-cache hit ratio at each load point against
 * what the expected-cache model says an infinite cache (and one of the modelled capacity) would have served, with the
 * knee in the caption.
 */
export function cachePressureChart(curve: readonly CachePressurePoint[], knee: CachePressureKnee, unit: string): string {
  const points: SeriesPoint[] = [];
  for (const p of curve) {
    if (p.hit_ratio !== null) points.push({ x: p.value, y: p.hit_ratio, series: 'actual (server)' });
    if (p.expected_hit_ratio_infinite !== null) points.push({ x: p.value, y: p.expected_hit_ratio_infinite, series: 'expected, infinite cache' });
    if (p.expected_hit_ratio !== null && knee.capacity_tokens !== null) points.push({ x: p.value, y: p.expected_hit_ratio, series: `expected, ${knee.capacity_tokens} KV tokens` });
    if (p.expected_hit_ratio_infinite !== null) points.push({ x: p.value, y: p.expected_hit_ratio_infinite * knee.share, series: `${Math.round(knee.share * 100)}% of infinite (knee line)` });
  }
  // sweep --think-time: the same curve over the idle gap between turns (retention).
  const retention = unit.includes('think time');
  const where =
    knee.knee === null
      ? `No knee: the actual hit ratio kept ${Math.round(knee.share * 100)}% of the infinite-cache expectation at every point.`
      : retention
        ? `Knee at ${fmtNum(knee.knee, 3)} s between turns: the server's cache holds a session across idle gaps up to ~${knee.holds_up_to ?? 0} s.`
        : `Knee at ${fmtNum(knee.knee, 3)} ${unit}: the prefix cache holds up to ~${knee.holds_up_to ?? 0} ${unit} of this shape.`;
  const analytic = knee.analytic_conversations === null ? '' : ` Analytic: ${knee.capacity_tokens} KV tokens ÷ mean context ≈ ${fmtNum(knee.analytic_conversations, 1)}.`;
  return chartFigure(
    'sweep-cache-pressure',
    retention ? 'Prefix-cache retention: hit ratio against the idle gap between turns, actual and expected' : 'Prefix-cache hit ratio against load: actual and expected',
    lineChart(points, { xLabel: unit, yLabel: 'cached / prompt', yPercent: true, dots: true }),
    where + analytic,
  );
}

/** The terminal's line: "prefix cache holds up to ~N concurrent conversations of this shape". */
export function cachePressureLine(k: CachePressureKnee, unit: string): string {
  const analytic = k.analytic_conversations === null ? '' : ` (analytic: ${k.capacity_tokens} KV tokens ÷ mean context = ${k.analytic_conversations.toFixed(1)})`;
  const rule = `actual hit ratio >= ${Math.round(k.share * 100)}% of the infinite-cache expectation`;
  if (k.holds_up_to === null && k.knee !== null) return `prefix cache: does not hold even at ${k.knee} ${unit} (${rule})${analytic}`;
  if (k.knee === null) return `prefix cache holds at every point, up to ${k.holds_up_to ?? '-'} ${unit} of this shape (${rule})${analytic}`;
  return `prefix cache holds up to ~${k.holds_up_to} ${unit} of this shape; at ${k.knee} the server evicts live conversations (${rule})${analytic}`;
}

/** `sweep --think-time`'s line: the idle gap between turns up to which the server's cache still holds a session. */
export function retentionLine(k: CachePressureKnee): string {
  const rule = `actual hit ratio >= ${Math.round(k.share * 100)}% of the infinite-cache expectation`;
  if (k.holds_up_to === null && k.knee !== null) return `prefix cache retention: does not hold a session even across ${k.knee} s idle gaps (${rule})`;
  if (k.knee === null) return `prefix cache retention: holds a session across every idle gap tried, up to ${k.holds_up_to ?? '-'} s (${rule})`;
  return `prefix cache retention: holds a session across idle gaps up to ${k.holds_up_to} s; at ${k.knee} s between turns the server no longer holds it (${rule})`;
}
