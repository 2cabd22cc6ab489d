import type { StatField } from '../metrics/stats.js';
import { semanticsText } from '../metrics/prefix-cache-tally.js';
import type { Summary } from '../metrics/summary.js';
import { lineChart, type SeriesPoint } from './charts.js';
import { chartFigure, escapeHtml, fmtNum, htmlPage, htmlTable, pageSections, type Cell, type PageSection } from './html-util.js';
import { beyondNoise, rateHalfWidth, ratioHalfWidth, statHalfWidth, withFloor } from './noise.js';
import type { RepeatInterval } from './repeats.js';
import { optionRow } from '../options/command-line.js';
import { percentileSupported } from '../metrics/percentile-support.js';
import type { RunData } from '../store/run-data.js';
import { cdfOfSorted, sortedLatencySamples } from './series.js';
import { wrapText } from './table-fit.js';
import { textTable } from './text-table.js';
import { chatloadVersion } from '../util/version.js';
import { counted } from '../util/plural.js';
import { escapeControl } from '../util/control-chars.js';

/** Whether a smaller or a larger value of a metric is the better one (null: neither, e.g. a count). */
export type Better = 'lower' | 'higher' | null;

/** One row of a comparison: a metric's value in each run (null where a run has none). */
export interface ComparisonRow {
  key: string;
  unit: string;
  better: Better;
  values: Array<number | null>;
  /** Each run's noise: the half-width of the value's 95% interval from the run's own spread (null: unknown). */
  noise: Array<number | null>;
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

/** The key metrics of each run side by side: counts, throughputs, latency mean and percentiles, cache ratios, each with its noise. */
export function compareRuns(runs: readonly RunData[], repeats: ReadonlyArray<readonly RepeatInterval[] | undefined> = []): ComparisonRow[] {
  const summaries: Summary[] = runs.map((r) => r.summary);
  const samples = runs.map((r) => sortedLatencySamples(r.records));
  const rateNoise = (key: SummaryScalar, s: Summary): number | null => {
    const value = typeof s[key] === 'number' ? s[key] : null;
    if (key === 'request_throughput' || key === 'output_throughput' || key === 'total_token_throughput' || key === 'completed') return rateHalfWidth(value, s.completed);
    if (key === 'failed') return rateHalfWidth(value, Math.max(1, s.failed));
    if (key === 'error_rate') return ratioHalfWidth(value, s.completed + s.failed);
    return null;
  };
  const rows: ComparisonRow[] = SCALAR_ROWS.map(([key, unit, better]) => ({
    key,
    unit,
    better,
    values: summaries.map((s) => (typeof s[key] === 'number' ? s[key] : null)),
    noise: summaries.map((s) => rateNoise(key, s)),
  }));
  for (const [metric, fields] of LATENCY_ROWS) {
    for (const field of fields) {
      rows.push({
        key: `${metric.replace('_ms', '')} ${field}`,
        unit: 'ms',
        better: 'lower',
        // A p99 from fewer than 100 values is not shown, as in the terminal and the report.
        values: summaries.map((s) => {
          const stats = s.metrics?.[metric];
          if (stats === null || stats === undefined) return null;
          return field === 'p99' && !percentileSupported(99, stats.count) ? null : stats[field];
        }),
        // ITL gaps come in one correlated group per request: the request count is the independent observations.
        noise: summaries.map((s, i) =>
          withFloor(statHalfWidth(s.metrics?.[metric], field, samples[i]![metric], metric === 'itl_ms' ? s.completed : undefined), s.metrics?.[metric]?.[field] ?? null),
        ),
      });
    }
  }
  rows.push(
    { key: 'cache_hit_ratio', unit: 'fraction', better: 'higher', values: summaries.map((s) => s.cache_hit_ratio ?? null), noise: summaries.map((s) => ratioHalfWidth(s.cache_hit_ratio ?? null, s.completed)) },
    { key: 'cache_efficiency', unit: 'fraction', better: 'higher', values: summaries.map((s) => s.cache_efficiency ?? null), noise: summaries.map((s) => ratioHalfWidth(s.cache_efficiency ?? null, s.completed)) },
  );
  // A --repeat folder: the mean across its repetitions, and their 95% interval as the band, for the metrics it has.
  repeats.forEach((intervals, i) => {
    for (const interval of intervals ?? []) {
      const row = rows.find((r) => r.key === interval.key);
      if (row === undefined || interval.mean === null) continue;
      row.values[i] = interval.mean;
      row.noise[i] = interval.ci95_half_width;
    }
  });
  return rows;
}

/** Stop reasons of a run that did not do what it was asked: the comparison flags them. */
const CUT_SHORT = new Set(['interrupted', 'benchmark_timeout', 'output_error']);

/** Why a run's numbers may not be comparable (interrupted, timed out, no results.json), or undefined. */
export function runCaveat(run: RunData): string | undefined {
  const reason = typeof run.facts.stop_reason === 'string' ? run.facts.stop_reason : undefined;
  if (!run.finished) return 'did not finish (no results.json): summarized from requests.jsonl';
  if (reason !== undefined && CUT_SHORT.has(reason)) return `stopped early: ${reason}`;
  return undefined;
}

/** Options that say where a run wrote, not how it ran: left out of the config differences. */
const PLACE_KEYS = new Set(['outputDir', 'overwrite', 'resume', 'outputFile', 'statsJsonOutput', 'excelOutput', 'csv', 'report']);

/**
 * The options whose values differ between runs, by flag name, with each run's value as text ('-' when unset). Also
 * the expected-cache model's semantics when they differ (another engine, or a run from before schema 1.2.0, whose
 * vLLM model took batch-mates not to share): the expected figures and efficiency then follow different rules.
 */
export function configDifferences(runs: readonly RunData[]): Array<{ flag: string; values: string[] }> {
  const keys = new Set(runs.flatMap((r) => Object.keys(r.config)));
  const out: Array<{ flag: string; values: string[] }> = [];
  for (const key of keys) {
    if (PLACE_KEYS.has(key)) continue;
    // Read back from each run's results.json: shown escaped, as anything from a file (util/control-chars.ts).
    const values = runs.map((r) => (r.config[key] === undefined ? '-' : escapeControl(optionRow(key, r.config[key]).value)));
    if (new Set(values).size > 1) out.push({ flag: optionRow(key, undefined).option, values });
  }
  const semantics = runs.map((r) => escapeControl(semanticsText(r.prefixCache?.model)));
  if (new Set(semantics).size > 1) out.push({ flag: 'expected-cache semantics (prefix_cache.model.semantics)', values: semantics });
  return out;
}

function valueText(value: number | null, unit: string): string {
  if (value === null) return '-';
  if (unit === 'fraction') return `${(value * 100).toFixed(1)}%`;
  return fmtNum(value, unit === 'requests' ? 0 : 2);
}

function deltaTexts(row: ComparisonRow, base: number | null, value: number | null, i: number): { abs: string; rel: string; verdict: Better | 'same' } {
  const d = delta(base, value);
  if (d.abs === null) return { abs: '-', rel: '-', verdict: null };
  const sign = d.abs > 0 ? '+' : d.abs < 0 ? '-' : '';
  const magnitude = Math.abs(d.abs);
  const abs = row.unit === 'fraction' ? `${sign}${(magnitude * 100).toFixed(1)} pt` : `${sign}${fmtNum(magnitude, row.unit === 'requests' ? 0 : 2)}`;
  const rel = d.rel === null ? '-' : `${d.rel > 0 ? '+' : d.rel < 0 ? '-' : ''}${Math.abs(d.rel * 100).toFixed(1)}%`;
  let verdict: Better | 'same' = null;
  // Coloured only beyond the noise band: a change inside the runs' own spread is 'same' (issue 18: a +0.2% TPOT
  // change was red). Unknown noise (no requests.jsonl for a percentile) leaves it uncoloured.
  const significant = beyondNoise(base, value, row.noise[0] ?? null, row.noise[i] ?? null);
  if (row.better !== null && significant !== null) {
    verdict = d.abs === 0 || !significant ? 'same' : (d.abs < 0) === (row.better === 'lower') ? 'higher' : 'lower';
  }
  return { abs, rel, verdict };
}

/**
 * The comparison as a terminal table: the first run is the baseline; every other run gets its value, the change
 * (Δ, absolute; percentage points for ratios) and the relative change (%). With colour, better changes are green and
 * worse ones red (ANSI), decided by the caller.
 */
export function formatComparison(runs: readonly RunData[], options: { color: boolean; repeats?: ReadonlyArray<readonly RepeatInterval[] | undefined>; width?: number }): string {
  const labels = runLabels(runs);
  const rows = compareRuns(runs, options.repeats);
  const head = ['metric', 'unit', labels[0]!];
  for (const label of labels.slice(1)) head.push(label, 'Δ', 'Δ%');
  const table: string[][] = [];
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
      const d = deltaTexts(row, base, value, i);
      cells.push(valueText(value, row.unit), paint(d.abs, d.verdict), paint(d.rel, d.verdict));
    }
    table.push(cells);
  }
  const notes = runs.map((r, i) => {
    const caveat = runCaveat(r);
    const repeated = options.repeats?.[i] === undefined ? '' : ` (--repeat: means across its repetitions, band = their 95% interval; charts from repetition 1)`;
    return `  ${escapeControl(labels[i]!)}: ${escapeControl(r.dir)}${repeated}${caveat === undefined ? '' : ` (${escapeControl(caveat)}${r.sampled ? '; percentiles from histograms' : ''})`}`;
  });
  const diffs = configDifferences(runs).map((d) => `  ${d.flag}: ${d.values.map((v, i) => `${labels[i]} ${v}`).join(' | ')}`);
  const diffText = diffs.length === 0 ? '  none (same options)' : diffs.join('\n');
  // To fit a terminal: the unit goes first, then each run's absolute change, then its relative one (the last run's first).
  const later = Array.from({ length: runs.length - 1 }, (_, i) => 3 + 3 * (runs.length - 2 - i));
  const fit = options.width === undefined ? undefined : { width: options.width, dropOrder: [1, ...later.map((c) => c + 1), ...later.map((c) => c + 2)] };
  const w = options.width;
  return (
    `${wrapText(`chatload compare (baseline: ${labels[0]}; a change is coloured only beyond both runs' 95% noise band)`, w)}\n` +
    `${textTable(table, { head, align: ['left', 'left', ...new Array<'right'>(head.length - 2).fill('right')], color: options.color, fit })}\n` +
    `${wrapText(`${notes.join('\n')}\noptions that differ:\n${diffText}`, w)}\n`
  );
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
export function renderCompareHtml(runs: readonly RunData[], options: { repeats?: ReadonlyArray<readonly RepeatInterval[] | undefined> } = {}): string {
  const labels = runLabels(runs);
  const page = pageSections(compareSections(runs, labels, options.repeats));
  return htmlPage({
    title: `chatload compare: ${labels.join(' vs ')}`,
    subtitle: counted(runs.length, 'run'),
    nav: page.nav,
    body: page.body,
    footer: `Generated by chatload ${chatloadVersion()}.`,
  });
}

/** The compare page's sections: the runs, the options that differ, the key metrics, per-turn curves, distributions. */
function compareSections(runs: readonly RunData[], labels: readonly string[], repeats: ReadonlyArray<readonly RepeatInterval[] | undefined> | undefined): PageSection[] {
  const head = ['metric', labels[0]!, ...labels.slice(1).flatMap((l) => [l, 'Δ', 'Δ%'])];
  return [
    { id: 'runs', title: 'Runs', html: compareRunsHtml(runs, labels, repeats) },
    { id: 'config', title: 'Options that differ', html: configDifferencesHtml(runs, labels) },
    { id: 'table', title: 'Key metrics', html: htmlTable(head, compareTableRows(runs, compareRuns(runs, repeats))) },
    { id: 'per-turn', title: 'Per turn', html: chartGrid(comparePerTurnCharts(runs, labels)) },
    { id: 'distributions', title: 'Distributions', html: cdfSampleNote(runs, labels) + chartGrid(compareCdfCharts(runs, labels)) },
  ];
}

/** The HTML table's rows: each metric with its unit, the baseline's value, then each run's value, Δ and Δ% (coloured). */
function compareTableRows(runs: readonly RunData[], rows: readonly ComparisonRow[]): Cell[][] {
  return rows.map((row): Cell[] => {
    const base = row.values[0] ?? null;
    const cells: Cell[] = [`${row.key} (${row.unit === 'fraction' ? '%' : row.unit})`, { text: valueText(base, row.unit), className: 'num' }];
    for (let i = 1; i < runs.length; i++) {
      const d = deltaTexts(row, base, row.values[i] ?? null, i);
      const cls = d.verdict === 'higher' ? 'num good' : d.verdict === 'lower' ? 'num bad' : 'num';
      cells.push({ text: valueText(row.values[i] ?? null, row.unit), className: 'num' }, { text: d.abs, className: cls }, { text: d.rel, className: cls });
    }
    return cells;
  });
}

/** Overlaid per-turn charts, one curve per run: TTFT, TPOT and E2EL p50, then the cache hit ratio. Figures' HTML. */
function comparePerTurnCharts(runs: readonly RunData[], labels: readonly string[]): string[] {
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
  return perTurn;
}

/** Overlaid CDFs of TTFT, TPOT, ITL and E2EL, one curve per run (from its loaded records). Figures' HTML. */
function compareCdfCharts(runs: readonly RunData[], labels: readonly string[]): string[] {
  const samples = runs.map((r) => sortedLatencySamples(r.records));
  const distributions: string[] = [];
  for (const [key, name] of [['ttft_ms', 'TTFT'], ['tpot_ms', 'TPOT'], ['itl_ms', 'ITL'], ['e2el_ms', 'E2EL']] as const) {
    const points: SeriesPoint[] = samples.flatMap((s, i) => cdfOfSorted(s[key]).map((p) => ({ x: p.value, y: p.fraction, series: labels[i]! })));
    if (points.length > 0) {
      const xs = points.map((p) => p.x);
      const lo = xs.reduce((a, b) => Math.min(a, b), Infinity);
      const hi = xs.reduce((a, b) => Math.max(a, b), -Infinity);
      const log = lo > 0 && hi >= 10 * lo; // as the run report: a log axis when the values span a decade
      distributions.push(
        chartFigure(
          `compare-${key.replace('_ms', '')}-cdf`,
          `${name}: distribution (CDF, ms${log ? ', log scale' : ''})`,
          lineChart(points, { xLabel: `${name} (ms${log ? ', log' : ''})`, yLabel: 'fraction ≤ x', yPercent: true, seriesOrder: labels, xLog: log }),
        ),
      );
    }
  }
  return distributions;
}

/** Figures in a chart grid, or "No data." for none. */
function chartGrid(figures: readonly string[]): string {
  return figures.length === 0 ? '<p class="muted">No data.</p>' : `<div class="charts">${figures.join('\n')}</div>`;
}

/** The note naming the runs whose CDFs come from a sample of their records; empty when none does. */
function cdfSampleNote(runs: readonly RunData[], labels: readonly string[]): string {
  const sampledRuns = runs.flatMap((r, i) => (r.sampled ? [`${labels[i]}: a uniform sample of ${r.records.length} of ${r.recordsTotal} records`] : []));
  return sampledRuns.length === 0 ? '' : `<p class="note">CDFs from samples (they estimate the full distributions): ${escapeHtml(sampledRuns.join('; '))}.</p>`;
}

/** The Runs section: a banner for runs cut short, each run's label, model and caveats, and how to read the Δ colours. */
function compareRunsHtml(runs: readonly RunData[], labels: readonly string[], repeats: ReadonlyArray<readonly RepeatInterval[] | undefined> | undefined): string {
  const runList = runs
    .map((r, i) => {
      const caveat = runCaveat(r);
      const notes = `${caveat === undefined ? '' : ` <strong class="bad">(${escapeHtml(caveat)})</strong>`}${r.sampled ? ` <em>(${r.recordsTotal} records, charted from a sample of ${r.records.length})</em>` : ''}`;
      const stop =
        (typeof r.facts.stop_reason === 'string' ? `, stopped: ${r.facts.stop_reason}` : '') +
        (repeats?.[i] === undefined ? '' : '; a --repeat folder: the table shows the means across its repetitions, its band their 95% interval; charts from repetition 1');
      return `<li><strong>${escapeHtml(labels[i])}</strong>: ${escapeHtml(String(r.facts.model ?? 'model unknown'))}${escapeHtml(stop)}${notes}</li>`;
    })
    .join('');
  const cut = runs.flatMap((r, i) => (runCaveat(r) === undefined ? [] : [`${labels[i]}: ${runCaveat(r)}`]));
  const cutBanner = cut.length === 0 ? '' : `<div class="banner bad"><strong>Not every run finished as asked.</strong> Its numbers cover only what it measured: ${escapeHtml(cut.join('; '))}.</div>`;
  return (
    `${cutBanner}<ul>${runList}</ul><p class="note">Baseline: ${escapeHtml(labels[0])}. Δ is each run minus the baseline; green is better, red worse, ` +
    "coloured only when the change is larger than both runs' 95% noise bands combined (from each run's own spread: a mean's std/√n, " +
    "a percentile's order-statistic interval, a rate's √n); uncoloured when it is within them or unknown.</p>"
  );
}

/** The options that differ between the runs as a table (one column per run), or a line saying they are the same. */
function configDifferencesHtml(runs: readonly RunData[], labels: readonly string[]): string {
  const diffs = configDifferences(runs);
  return diffs.length === 0
    ? '<p>The runs used the same options (output places aside).</p>'
    : htmlTable(['option', ...labels], diffs.map((d): Cell[] => [d.flag, ...d.values.map((v) => ({ html: `<pre class="value">${escapeHtml(v)}</pre>` }))]));
}
