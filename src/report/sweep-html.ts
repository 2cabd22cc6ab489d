import type { CachePressureKnee, CachePressurePoint } from '../metrics/cache-pressure.js';
import type { SweepPoint } from '../metrics/sweep-point.js';
import { cachePressureChart } from './cache-pressure-chart.js';
import { lineChart, type SeriesPoint } from './charts.js';
import { chartFigure, fmtNum, fmtPercent, htmlPage, htmlTable } from './html-util.js';

/**
 * The sweep's self-contained HTML page: latency percentiles against achieved throughput (the load curve), per-turn
 * TTFT at each load point, and a table of every point. Same rules as the run report: inline SVG, no script, no fetch.
 */
export function renderSweepHtml(points: readonly SweepPoint[], info: { plan: string; bestRate: number | null; cachePressure?: { curve: CachePressurePoint[]; knee: CachePressureKnee } | null }): string {
  const unit = points[0]?.kind === 'concurrency' ? 'clients' : 'sessions/s';
  const curve: SeriesPoint[] = [];
  const e2elCurve: SeriesPoint[] = [];
  for (const p of points) {
    const x = p.summary.request_throughput;
    const ttft = p.summary.metrics.ttft_ms;
    const e2el = p.summary.metrics.e2el_ms;
    if (ttft) curve.push({ x, y: ttft.p50, series: 'TTFT p50' }, { x, y: ttft.p90, series: 'TTFT p90' }, { x, y: ttft.p99, series: 'TTFT p99' });
    if (e2el) e2elCurve.push({ x, y: e2el.p50, series: 'E2EL p50' }, { x, y: e2el.p90, series: 'E2EL p90' }, { x, y: e2el.p99, series: 'E2EL p99' });
  }
  const perTurn: SeriesPoint[] = [];
  for (const p of points) {
    for (const t of p.perTurn) if (t.ttft_ms) perTurn.push({ x: t.turn, y: t.ttft_ms.p50, series: `${fmtNum(p.value, 3)} ${unit}` });
  }
  const charts = [
    chartFigure('sweep-ttft', 'TTFT against throughput', lineChart(curve, { xLabel: 'requests/s (achieved)', yLabel: 'TTFT (ms)', dots: true })),
    chartFigure('sweep-e2el', 'E2EL against throughput', lineChart(e2elCurve, { xLabel: 'requests/s (achieved)', yLabel: 'E2EL (ms)', dots: true })),
    chartFigure('sweep-turns', 'TTFT p50 by turn at each load point', lineChart(perTurn, { xLabel: 'turn', xIntegers: true, yLabel: 'TTFT p50 (ms)', dots: true })),
  ];
  // sweep --cache-pressure (issue #13): its chart, drawn by its own module.
  if (info.cachePressure) charts.unshift(cachePressureChart(info.cachePressure.curve, info.cachePressure.knee, unit));
  const rows = points.map((p) => [
    fmtNum(p.value, 3),
    p.summary.completed,
    p.summary.failed,
    fmtNum(p.summary.request_throughput),
    fmtNum(p.summary.output_throughput, 1),
    fmtNum(p.summary.metrics.ttft_ms?.p50),
    fmtNum(p.summary.metrics.ttft_ms?.p99),
    fmtNum(p.summary.metrics.e2el_ms?.p50),
    fmtPercent(p.summary.cache_hit_ratio),
    p.summary.goodput === null ? '-' : fmtPercent(p.summary.goodput.share),
    p.meetsSlos === null ? '-' : p.meetsSlos ? 'yes' : 'no',
  ]);
  const best = info.bestRate === null ? '' : `<p>Highest session rate that met the SLOs: <strong>${fmtNum(info.bestRate, 3)} sessions/s</strong></p>`;
  const body = `<section id="points"><h2>Load points</h2>${best}${htmlTable(
    [unit, 'completed', 'failed', 'req/s', 'output tok/s', 'TTFT p50', 'TTFT p99', 'E2EL p50', 'cache hit', 'goodput share', 'meets SLOs'],
    rows,
  )}</section><section id="curves"><h2>Curves</h2>${charts.join('\n')}</section>`;
  return htmlPage({
    title: 'chatload sweep',
    subtitle: info.plan,
    nav: [
      ['points', 'Load points'],
      ['curves', 'Curves'],
    ],
    body,
    footer: 'Each point is a full run in its own folder (results.json, requests.jsonl, report.html).',
  });
}
