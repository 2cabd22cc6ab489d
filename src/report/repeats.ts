import type { Summary } from '../metrics/summary.js';
import { fmtNum } from './html-util.js';
import { wrapText } from './table-fit.js';
import { textTable } from './text-table.js';

/** Two-sided 95% Student t quantiles by degrees of freedom 1..30 (beyond: 1.96). */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

/** The two-sided 95% t quantile for `df` degrees of freedom. */
export function t95(df: number): number {
  return df >= 1 && df <= T95.length ? T95[df - 1]! : 1.96;
}

/** One metric across repeated runs: each run's value, their mean and the half-width of its 95% confidence interval. */
export interface RepeatInterval {
  key: string;
  unit: string;
  values: Array<number | null>;
  mean: number | null;
  /** t(0.975, n-1) · s / √n over the runs that have a value; null with fewer than two. */
  ci95_half_width: number | null;
}

/** The metrics a repeated run reports an interval for, read from each run's summary. */
const REPEAT_METRICS: ReadonlyArray<[string, string, (s: Summary) => number | null | undefined]> = [
  ['request_throughput', 'req/s', (s) => s.request_throughput],
  ['output_throughput', 'tok/s', (s) => s.output_throughput],
  ['ttft p50', 'ms', (s) => s.metrics.ttft_ms?.p50],
  ['ttft p99', 'ms', (s) => (s.metrics.ttft_ms && s.metrics.ttft_ms.count >= 100 ? s.metrics.ttft_ms.p99 : null)],
  ['tpot p50', 'ms', (s) => s.metrics.tpot_ms?.p50],
  ['tpot p99', 'ms', (s) => (s.metrics.tpot_ms && s.metrics.tpot_ms.count >= 100 ? s.metrics.tpot_ms.p99 : null)],
  ['itl p50', 'ms', (s) => s.metrics.itl_ms?.p50],
  ['e2el p50', 'ms', (s) => s.metrics.e2el_ms?.p50],
  ['e2el p99', 'ms', (s) => (s.metrics.e2el_ms && s.metrics.e2el_ms.count >= 100 ? s.metrics.e2el_ms.p99 : null)],
  ['error_rate', 'fraction', (s) => s.error_rate],
  ['cache_hit_ratio', 'fraction', (s) => s.cache_hit_ratio],
];

/** The 95% confidence interval of each key metric across repeated runs of one configuration (`--repeat N`). */
export function repeatIntervals(summaries: readonly Summary[]): RepeatInterval[] {
  return REPEAT_METRICS.map(([key, unit, read]) => {
    const values = summaries.map((s) => {
      const v = read(s);
      return v === undefined || v === null || !Number.isFinite(v) ? null : v;
    });
    const xs = values.filter((v): v is number => v !== null);
    const n = xs.length;
    const mean = n === 0 ? null : xs.reduce((a, b) => a + b, 0) / n;
    let half: number | null = null;
    if (n >= 2 && mean !== null) {
      const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1);
      half = (t95(n - 1) * Math.sqrt(variance)) / Math.sqrt(n);
    }
    return { key, unit, values, mean, ci95_half_width: half };
  });
}

/** The intervals as a terminal table: metric, mean ± half-width (and as % of the mean), each run's value. */
export function formatRepeatIntervals(intervals: readonly RepeatInterval[], runs: number, width?: number): string {
  const head = ['metric', 'unit', 'mean', '± 95% CI', '±%', ...Array.from({ length: runs }, (_, i) => `#${i + 1}`)];
  // To fit a terminal: each run's own value goes first (the last run's first; repeats.json keeps them), then ±% and the unit.
  const dropOrder = [...Array.from({ length: runs }, (_, i) => 4 + runs - i), 4, 1];
  const table: string[][] = [];
  const show = (v: number | null, unit: string): string => (v === null ? '-' : unit === 'fraction' ? `${(v * 100).toFixed(2)}%` : fmtNum(v));
  for (const r of intervals) {
    const rel = r.mean !== null && r.ci95_half_width !== null && r.mean !== 0 ? `${((r.ci95_half_width / Math.abs(r.mean)) * 100).toFixed(1)}%` : '-';
    table.push([r.key, r.unit === 'fraction' ? '%' : r.unit, show(r.mean, r.unit), show(r.ci95_half_width, r.unit), rel, ...r.values.map((v) => show(v, r.unit))]);
  }
  const title = `chatload run --repeat ${runs}: mean and 95% confidence interval across the repetitions (Student t)`;
  return `${wrapText(title, width)}\n${textTable(table, { head, align: head.map((_, c) => (c < 2 ? 'left' : 'right')), fit: width === undefined ? undefined : { width, dropOrder } })}\n`;
}

/** One metric's mean with its interval, e.g. "28.1 ± 0.9" ("28.1" alone with one repetition; "-" without a value). */
export function fmtMeanInterval(intervals: readonly RepeatInterval[], key: string): string {
  const r = intervals.find((i) => i.key === key);
  if (r === undefined || r.mean === null) return '-';
  const show = (v: number): string => (r.unit === 'fraction' ? `${(v * 100).toFixed(1)}%` : fmtNum(v));
  return r.ci95_half_width === null ? show(r.mean) : `${show(r.mean)} ± ${show(r.ci95_half_width)}`;
}
