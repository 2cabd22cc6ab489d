import { basename } from 'node:path';
import { percentileSupported } from '../metrics/percentile-support.js';
import type { Stats } from '../metrics/stats.js';
import type { CachePressureKnee, CachePressurePoint } from '../metrics/cache-pressure.js';
import type { SweepPoint } from '../metrics/sweep-point.js';
import { cachePressureChart } from './cache-pressure-chart.js';
import { fmtMeanInterval } from './repeats.js';
import { lineChart, type SeriesPoint } from './charts.js';
import { redactSecrets } from '../store/redact.js';
import { chartFigure, escapeHtml, fmtNum, fmtPercent, htmlPage, htmlTable, pageSections, type Cell, type PageSection } from './html-util.js';

/** The latency metrics charted against throughput, with their display names. */
const LATENCIES = [
  ['ttft_ms', 'TTFT'],
  ['tpot_ms', 'TPOT'],
  ['itl_ms', 'ITL'],
  ['e2el_ms', 'E2EL'],
] as const;

/** A percentile of a point's stats, or null when its count does not support it (p99 needs 100 values). */
function pct(stats: Stats | null | undefined, p: 50 | 90 | 99): number | null {
  if (stats === null || stats === undefined || !percentileSupported(p, stats.count)) return null;
  return p === 50 ? stats.p50 : p === 90 ? stats.p90 : stats.p99;
}

/** A point's load as a label: "8" clients or "2.5" sessions/s. */
function loadLabel(p: SweepPoint): string {
  return fmtNum(p.value, 3);
}

/** Each latency against achieved throughput, p50/p90/p99, the p50 dots labelled with the load. */
function latencyCharts(points: readonly SweepPoint[], unit: string): string[] {
  const figures: string[] = [];
  for (const [key, name] of LATENCIES) {
    const curve: SeriesPoint[] = [];
    for (const p of points) {
      const stats = p.summary.metrics[key];
      const x = p.summary.request_throughput;
      for (const q of [50, 90, 99] as const) {
        const y = pct(stats, q);
        if (y !== null) curve.push({ x, y, series: `p${q}`, label: q === 50 ? loadLabel(p) : undefined });
      }
    }
    if (curve.length === 0) continue;
    figures.push(
      chartFigure(
        `sweep-${key.replace('_ms', '')}`,
        `${name} against throughput`,
        lineChart(curve, { xLabel: 'requests/s (achieved)', yLabel: `${name} (ms)`, dots: true, pointLabels: true, seriesOrder: ['p50', 'p90', 'p99'], width: 1100, height: 300 }),
        `Each dot is a load point (labels: ${unit}); p99 only where the point has 100 values or more.`,
      ),
    );
  }
  return figures;
}

/**
 * The throughput-latency trade-off: output tokens/s of the server against tokens/s each user sees (1000 / TPOT p50).
 * The Pareto front joins the points no other point beats on both.
 */
function paretoChart(points: readonly SweepPoint[], unit: string): string | undefined {
  const all = points.flatMap((p) => {
    const tpot = p.summary.metrics.tpot_ms?.p50;
    return tpot === undefined || tpot === null || tpot <= 0 ? [] : [{ x: 1000 / tpot, y: p.summary.output_throughput, label: loadLabel(p) }];
  });
  if (all.length === 0) return undefined;
  const front = all.filter((a) => !all.some((b) => b !== a && b.x >= a.x && b.y >= a.y && (b.x > a.x || b.y > a.y))).sort((a, b) => a.x - b.x);
  const series: SeriesPoint[] = [
    ...front.map((p) => ({ x: p.x, y: p.y, series: 'Pareto front' })),
    ...all.map((p) => ({ x: p.x, y: p.y, series: 'load points', label: p.label })),
  ];
  return chartFigure(
    'sweep-pareto',
    'Throughput against per-user speed (Pareto)',
    lineChart(series, { xLabel: 'output tokens/s per user (1000 / TPOT p50)', yLabel: 'output tokens/s (server)', dots: true, pointLabels: true, dotsOnly: ['load points'], seriesOrder: ['Pareto front', 'load points'], width: 1100, height: 340 }),
    `Up and to the right is better. Labels: ${unit}. The front joins the points no other point beats on both axes.`,
  );
}

/** What a sweep page is of: its plan, the --search answer and the cache curve, and the server, model and date it names. */
export interface SweepPageInfo {
  /** describePlan's line, e.g. `clients: 1, 2, 4`. */
  plan: string;
  bestRate: number | null;
  cachePressure?: { curve: CachePressurePoint[]; knee: CachePressureKnee } | null;
  /** The server's URL as shown (credentials redacted; redacted again here), or `embedded simulator`. */
  server?: string;
  /** The model the server served; null or absent when no point ran. */
  model?: string | null;
  /** When the sweep started, ISO 8601. */
  createdAt?: string;
}

/** The page's heading, as report.html's names a run: `chatload sweep: MODEL`, then server · plan · created DATE. */
function sweepHeading(info: SweepPageInfo): { title: string; subtitle: string } {
  const subtitle = [info.server === undefined ? undefined : `server ${redactSecrets(info.server)}`, info.plan, info.createdAt === undefined ? undefined : `created ${info.createdAt}`];
  return { title: `chatload sweep${info.model ? `: ${info.model}` : ''}`, subtitle: subtitle.filter((x) => x !== undefined).join(' · ') };
}

/**
 * The sweep's self-contained HTML page: each load point linked to its own report, every latency metric against
 * achieved throughput with labelled points, the throughput-latency trade-off, and per-turn TTFT at each load. Same
 * rules as the run report: inline SVG, no script, no fetch; the heading names the server, model and date. The page is
 * a list of sections: another section (a prefix cache chart, tool calls) is one more entry.
 */
export function renderSweepHtml(points: readonly SweepPoint[], info: SweepPageInfo): string {
  const unit = points[0]?.kind === 'concurrency' ? 'clients' : points[0]?.kind === 'think-time' ? 's of think time' : 'sessions/s';
  const perTurn: SeriesPoint[] = [];
  const loads = points.map((p) => `${loadLabel(p)} ${unit}`);
  for (const p of points) {
    for (const t of p.perTurn) if (t.ttft_ms) perTurn.push({ x: t.turn, y: t.ttft_ms.p50, series: `${loadLabel(p)} ${unit}` });
  }
  const curves = [...latencyCharts(points, unit)];
  const pareto = paretoChart(points, unit);
  if (pareto !== undefined) curves.unshift(pareto);
  // sweep --cache-pressure (issue #13): its chart, drawn by its own module.
  if (info.cachePressure) curves.unshift(cachePressureChart(info.cachePressure.curve, info.cachePressure.knee, unit));
  const turnCharts =
    perTurn.length === 0
      ? []
      : [chartFigure('sweep-turns', 'TTFT p50 by turn at each load point', lineChart(perTurn, { xLabel: 'turn', xIntegers: true, yLabel: 'TTFT p50 (ms)', dots: true, seriesOrder: loads, width: 1100, height: 300 }))];

  const ms = (v: number | null): Cell => ({ text: fmtNum(v), className: 'num' });
  const repeated = points.some((p) => p.repeats !== undefined);
  const rows = points.map((p): Cell[] => {
    const m = p.summary.metrics;
    // --repeat: a key metric shows its mean ± 95% interval across the repetitions (the others: repetition 1's).
    const mean = (key: string, single: Cell): Cell => (p.repeats === undefined ? single : { text: fmtMeanInterval(p.repeats.intervals, key), className: 'num' });
    const dir = p.repeats === undefined ? basename(p.outputDir) : `${basename(p.outputDir)}/repeat-1`;
    return [
      { html: `<a href="${escapeHtml(`${dir}/report.html`)}">${escapeHtml(loadLabel(p))}</a>${p.repeats === undefined ? '' : ` ×${p.repeats.runs.length}`}` },
      p.summary.completed,
      p.summary.failed,
      mean('request_throughput', fmtNum(p.summary.request_throughput)),
      mean('output_throughput', fmtNum(p.summary.output_throughput, 1)),
      mean('ttft p50', ms(pct(m.ttft_ms, 50))),
      mean('ttft p99', ms(pct(m.ttft_ms, 99))),
      mean('tpot p50', ms(pct(m.tpot_ms, 50))),
      mean('tpot p99', ms(pct(m.tpot_ms, 99))),
      mean('itl p50', ms(pct(m.itl_ms, 50))),
      ms(pct(m.itl_ms, 99)),
      mean('e2el p50', ms(pct(m.e2el_ms, 50))),
      mean('e2el p99', ms(pct(m.e2el_ms, 99))),
      mean('cache_hit_ratio', fmtPercent(p.summary.cache_hit_ratio)),
      p.summary.goodput === null ? '-' : fmtPercent(p.summary.goodput.share),
      p.meetsSlos === null ? '-' : p.meetsSlos ? 'yes' : 'no',
      p.stopReason,
    ];
  });
  const best = info.bestRate === null ? '' : `<p>Highest session rate that met the SLOs: <strong>${fmtNum(info.bestRate, 3)} sessions/s</strong></p>`;
  const head = [unit, 'completed', 'failed', 'req/s', 'output tok/s', 'TTFT p50', 'TTFT p99', 'TPOT p50', 'TPOT p99', 'ITL p50', 'ITL p99', 'E2EL p50', 'E2EL p99', 'cache hit', 'goodput share', 'meets SLOs', 'stopped'];
  const grid = (figures: readonly string[]): string => (figures.length === 0 ? '<p class="muted">No data.</p>' : `<div class="charts full">${figures.join('\n')}</div>`);
  const sections: PageSection[] = [
    {
      id: 'points',
      title: 'Load points',
      html: `${best}${htmlTable(head, rows)}<p class="note">Each load value links to that point's own report (its folder holds results.json and requests.jsonl). Latencies in ms; p99 needs 100 values (else -).${
        repeated
          ? ' A load marked ×N ran N times (--repeat): req/s, tok/s, cache hit and the latencies but ITL p99 show the mean ± its 95% confidence interval across the repetitions (the point\'s repeats.json); completed, failed, ITL p99, the charts and the link are repetition 1\'s.'
          : ''
      }</p>`,
    },
    { id: 'curves', title: 'Curves', html: grid(curves) },
    { id: 'per-turn', title: 'Per turn', html: grid(turnCharts) },
  ];
  const page = pageSections(sections);
  return htmlPage({
    ...sweepHeading(info),
    nav: page.nav,
    body: page.body,
    footer: 'Each point is a full run in its own folder (results.json, requests.jsonl, report.html).',
  });
}
