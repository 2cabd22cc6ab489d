import Table from 'cli-table3';
import type { StatField } from '../metrics/stats.js';
import type { Summary } from '../metrics/summary.js';
import { lineChart, type SeriesPoint } from './charts.js';
import { chartFigure, escapeHtml, fmtNum, htmlPage, htmlTable, type Cell } from './html-util.js';
import type { RunData } from '../store/run-data.js';
import { cdfPoints, latencySamples, type LatencySamples } from './series.js';
import { chatloadVersion } from '../util/version.js';

/** Whether a smaller or a larger value of a metric is the better one (null: neither, e.g. a count). */
export type Better = 'lower' | 'higher' | null;

/** One row of a comparison: a metric's value in each run (null where a run has none). */
export interface ComparisonRow {
  key: string;
  unit: string;
  better: Better;
  values: Array<number | null>;
}

/** The change from `base` to `value`: absolute and relative (fraction of base; null when base is 0 or either is null). */
export function delta(base: number | null, value: number | null): { abs: number | null; rel: number | null } {
  if (base === null || value === null) return { abs: null, rel: null };
  return { abs: value - base, rel: base === 0 ? null : (value - base) / Math.abs(base) };
}

type SummaryScalar = 'requests' | 'completed' | 'failed' | 'error_rate' | 'runtime_sec' | 'request_throughput' | 'output_throughput' | 'total_token_throughput' | 'cache_hit_ratio' | 'cache_efficiency';

const SCALAR_ROWS: ReadonlyArray<[SummaryScalar, string, Better]> = [
  ['requests', 'requests', null],
  ['completed', 'requests', 'higher'],
  ['failed', 'requests', 'lower'],
  ['error_rate', 'fraction', 'lower'],
  ['runtime_sec', 's', null],
  ['request_throughput', 'req/s', 'higher'],
  ['output_throughput', 'tok/s', 'higher'],
  ['total_token_throughput', 'tok/s', 'higher'],
];

const LATENCY_ROWS: ReadonlyArray<['ttft_ms' | 'tpot_ms' | 'itl_ms' | 'e2el_ms', ReadonlyArray<StatField>]> = [
  ['ttft_ms', ['mean', 'p50', 'p90', 'p99']],
  ['tpot_ms', ['mean', 'p50', 'p90', 'p99']],
  ['itl_ms', ['mean', 'p50', 'p99']],
  ['e2el_ms', ['mean', 'p50', 'p90', 'p99']],
];

/** Distinct labels for the runs: the directory names, with " #2", " #3" added where two runs share a name. */
export function runLabels(runs: readonly RunData[]): string[] {
  const seen = new Map<string, number>();
  return runs.map((r) => {
    const n = (seen.get(r.label) ?? 0) + 1;
    seen.set(r.label, n);
    return n === 1 ? r.label : `${r.label} #${n}`;
  });
}

/** The key metrics of each run side by side: counts, throughputs, latency mean and percentiles, cache ratios. */
export function compareRuns(runs: readonly RunData[]): ComparisonRow[] {
  const summaries: Summary[] = runs.map((r) => r.summary);
  const rows: ComparisonRow[] = SCALAR_ROWS.map(([key, unit, better]) => ({
    key,
    unit,
    better,
    values: summaries.map((s) => (typeof s[key] === 'number' ? s[key] : null)),
  }));
  for (const [metric, fields] of LATENCY_ROWS) {
    for (const field of fields) {
      rows.push({
        key: `${metric.replace('_ms', '')} ${field}`,
        unit: 'ms',
        better: 'lower',
        values: summaries.map((s) => s.metrics?.[metric]?.[field] ?? null),
      });
    }
  }
  rows.push(
    { key: 'cache_hit_ratio', unit: 'fraction', better: 'higher', values: summaries.map((s) => s.cache_hit_ratio ?? null) },
    { key: 'cache_efficiency', unit: 'fraction', better: 'higher', values: summaries.map((s) => s.cache_efficiency ?? null) },
  );
  return rows;
}

function valueText(value: number | null, unit: string): string {
  if (value === null) return '-';
  if (unit === 'fraction') return `${(value * 100).toFixed(1)}%`;
  return fmtNum(value, unit === 'requests' ? 0 : 2);
}

function deltaTexts(row: ComparisonRow, base: number | null, value: number | null): { abs: string; rel: string; verdict: Better | 'same' } {
  const d = delta(base, value);
  if (d.abs === null) return { abs: '-', rel: '-', verdict: null };
  const sign = d.abs > 0 ? '+' : d.abs < 0 ? '-' : '';
  const magnitude = Math.abs(d.abs);
  const abs = row.unit === 'fraction' ? `${sign}${(magnitude * 100).toFixed(1)} pt` : `${sign}${fmtNum(magnitude, row.unit === 'requests' ? 0 : 2)}`;
  const rel = d.rel === null ? '-' : `${d.rel > 0 ? '+' : d.rel < 0 ? '-' : ''}${Math.abs(d.rel * 100).toFixed(1)}%`;
  let verdict: Better | 'same' = null;
  if (row.better !== null) verdict = d.abs === 0 ? 'same' : (d.abs < 0) === (row.better === 'lower') ? 'higher' : 'lower';
  return { abs, rel, verdict };
}

/**
 * The comparison as a terminal table: the first run is the baseline; every other run gets its value, the change
 * (Δ, absolute; percentage points for ratios) and the relative change (%). With colour, better changes are green and
 * worse ones red (ANSI), decided by the caller.
 */
export function formatComparison(runs: readonly RunData[], options: { color: boolean }): string {
  const labels = runLabels(runs);
  const rows = compareRuns(runs);
  const head = ['metric', 'unit', labels[0]!];
  for (const label of labels.slice(1)) head.push(label, 'Δ', 'Δ%');
  const style = options.color ? { head: ['cyan'], border: ['grey'], compact: true } : { head: [], border: [], compact: true };
  const table = new Table({ head, style, colAligns: ['left', 'left', ...new Array<'right'>(head.length - 2).fill('right')] });
  const paint = (text: string, verdict: Better | 'same'): string => {
    if (!options.color || verdict === null || verdict === 'same') return text;
    // 'higher' here means "better" (see deltaTexts): green; worse: red.
    return verdict === 'higher' ? `\x1b[32m${text}\x1b[39m` : `\x1b[31m${text}\x1b[39m`;
  };
  for (const row of rows) {
    const base = row.values[0] ?? null;
    const cells = [row.key, row.unit === 'fraction' ? '%' : row.unit, valueText(base, row.unit)];
    for (let i = 1; i < runs.length; i++) {
      const value = row.values[i] ?? null;
      const d = deltaTexts(row, base, value);
      cells.push(valueText(value, row.unit), paint(d.abs, d.verdict), paint(d.rel, d.verdict));
    }
    table.push(cells);
  }
  const notes = runs.map((r, i) => `  ${labels[i]}: ${r.dir}${r.finished ? '' : ` (did not finish: summarized from requests.jsonl${r.sampled ? '; percentiles from histograms' : ''})`}`);
  return `chatload compare (baseline: ${labels[0]})\n${table.toString()}\n${notes.join('\n')}\n`;
}

const TURN_METRICS = [
  ['ttft_ms', 'TTFT p50'],
  ['tpot_ms', 'TPOT p50'],
  ['e2el_ms', 'E2EL p50'],
] as const;

/**
 * An HTML page with the comparison table, overlaid per-turn curves (p50 latencies, cache hit) and overlaid CDFs. A run
 * loaded as a sample (RunData.sampled) has its CDF drawn from the sample, and the page says so; its table values come
 * from its summary (all records).
 */
export function renderCompareHtml(runs: readonly RunData[]): string {
  const labels = runLabels(runs);
  const rows = compareRuns(runs);
  const head = ['metric', labels[0]!, ...labels.slice(1).flatMap((l) => [l, 'Δ', 'Δ%'])];
  const tableRows = rows.map((row): Cell[] => {
    const base = row.values[0] ?? null;
    const cells: Cell[] = [`${row.key} (${row.unit === 'fraction' ? '%' : row.unit})`, { text: valueText(base, row.unit), className: 'num' }];
    for (let i = 1; i < runs.length; i++) {
      const d = deltaTexts(row, base, row.values[i] ?? null);
      const cls = d.verdict === 'higher' ? 'num good' : d.verdict === 'lower' ? 'num bad' : 'num';
      cells.push({ text: valueText(row.values[i] ?? null, row.unit), className: 'num' }, { text: d.abs, className: cls }, { text: d.rel, className: cls });
    }
    return cells;
  });

  const perTurn: string[] = [];
  for (const [key, name] of TURN_METRICS) {
    const points: SeriesPoint[] = runs.flatMap((r, i) =>
      r.perTurn.flatMap((t) => (t[key] === null ? [] : [{ x: t.turn, y: t[key]!.p50, series: labels[i]! }])),
    );
    if (points.length > 0) {
      perTurn.push(chartFigure(`compare-${key.replace('_ms', '')}-per-turn`, `${name} by turn (ms)`, lineChart(points, { xLabel: 'turn', xIntegers: true, yLabel: `${name} (ms)`, dots: true, seriesOrder: labels })));
    }
  }
  const hit: SeriesPoint[] = runs.flatMap((r, i) =>
    r.perTurn.flatMap((t) => (t.cache_hit_ratio === null ? [] : [{ x: t.turn, y: t.cache_hit_ratio, series: labels[i]! }])),
  );
  if (hit.length > 0) {
    perTurn.push(chartFigure('compare-cache-hit-per-turn', 'Cache hit ratio by turn', lineChart(hit, { xLabel: 'turn', xIntegers: true, yLabel: 'cached / prompt', dots: true, yPercent: true, seriesOrder: labels })));
  }

  const samples: LatencySamples[] = runs.map((r) => latencySamples(r.records));
  const distributions: string[] = [];
  for (const [key, name] of [['ttft_ms', 'TTFT'], ['tpot_ms', 'TPOT'], ['itl_ms', 'ITL'], ['e2el_ms', 'E2EL']] as const) {
    const points: SeriesPoint[] = samples.flatMap((s, i) => cdfPoints(s[key]).map((p) => ({ x: p.value, y: p.fraction, series: labels[i]! })));
    if (points.length > 0) {
      distributions.push(chartFigure(`compare-${key.replace('_ms', '')}-cdf`, `${name}: distribution (CDF, ms)`, lineChart(points, { xLabel: `${name} (ms)`, yLabel: 'fraction ≤ x', yPercent: true, seriesOrder: labels })));
    }
  }
  const grid = (figures: string[]): string =>
    figures.length === 0 ? '<p class="muted">No data.</p>' : `<div class="charts">${figures.join('\n')}</div>`;
  const sampledRuns = runs.flatMap((r, i) => (r.sampled ? [`${labels[i]}: a uniform sample of ${r.records.length} of ${r.recordsTotal} records`] : []));
  const sampleNote =
    sampledRuns.length === 0 ? '' : `<p class="note">CDFs from samples (they estimate the full distributions): ${escapeHtml(sampledRuns.join('; '))}.</p>`;
  const runList = runs
    .map((r, i) => {
      const notes = `${r.finished ? '' : ' <em>(did not finish)</em>'}${r.sampled ? ` <em>(${r.recordsTotal} records, charted from a sample of ${r.records.length})</em>` : ''}`;
      return `<li><strong>${escapeHtml(labels[i])}</strong>: ${escapeHtml(String(r.facts.model ?? 'model unknown'))}${notes}</li>`;
    })
    .join('');
  const body = [
    `<section id="runs"><h2>Runs</h2><ul>${runList}</ul><p class="note">Baseline: ${escapeHtml(labels[0])}. Δ is each run minus the baseline; green is better, red worse.</p></section>`,
    `<section id="table"><h2>Key metrics</h2>${htmlTable(head, tableRows)}</section>`,
    `<section id="per-turn"><h2>Per turn</h2>${grid(perTurn)}</section>`,
    `<section id="distributions"><h2>Distributions</h2>${sampleNote}${grid(distributions)}</section>`,
  ].join('\n');
  return htmlPage({
    title: `chatload compare: ${labels.join(' vs ')}`,
    subtitle: `${runs.length} runs`,
    nav: [
      ['runs', 'Runs'],
      ['table', 'Key metrics'],
      ['per-turn', 'Per turn'],
      ['distributions', 'Distributions'],
    ],
    body,
    footer: `Generated by chatload ${chatloadVersion()}.`,
  });
}
