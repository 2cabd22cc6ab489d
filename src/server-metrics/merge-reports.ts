import { counterDeltas, MAX_SAMPLES, type CounterDeltas, type ServerMetricsPoint, type ServerMetricsReport } from './scraper.js';

/*
 * The server's own counters across runs that scraped one server (`chatload merge`): shards on several machines each
 * read the same /metrics page before and after their own run. The server counts every request, so each shard's delta
 * already holds the others' traffic while they overlapped, and summing the deltas would count it again. Counters only
 * grow, so the merged window's delta is the last "after" less the first "before": the earliest-starting run's first
 * read against the latest-ending run's last. That needs the counters' values, which results.json keeps in `before`
 * and `after` (the token counters from schema 1.1.0; an older file's runs merge their prefix-cache counters only).
 */

/** One run's report, placed on the merge's clock. */
export interface ServerMetricsPart {
  /** The run's folder, to name it in a warning. */
  dir: string;
  report: ServerMetricsReport;
  /** When the run's clock began on the merge's clock, ms (its records move by the same). */
  offsetMs: number;
}

/** The merged report, or null with the reason in `warnings`. */
export interface MergedServerMetrics {
  report: ServerMetricsReport | null;
  warnings: string[];
}

const COUNTERS = ['prefix_cache_queries', 'prefix_cache_hits', 'prompt_tokens', 'generation_tokens', 'requests'] as const;

/** Where a run's scrapes began and ended on the merge's clock (its series' first and last sample). */
function span(part: ServerMetricsPart): { start: number; end: number } {
  const series = part.report.series;
  return { start: part.offsetMs + (series[0]?.t_ms ?? 0), end: part.offsetMs + (series.at(-1)?.t_ms ?? 0) };
}

/**
 * The counter that went back in time between two of the runs' reads (the server restarted, or the pages are not one
 * server's), as "counter (run A then run B)"; undefined when each counter grew from read to read. Reads are ordered by
 * when they were taken; a run's before precedes its after.
 */
function counterThatWentBack(parts: readonly ServerMetricsPart[]): string | undefined {
  const reads: Array<{ at: number; point: ServerMetricsPoint | null; dir: string }> = [];
  for (const part of parts) {
    const { start, end } = span(part);
    reads.push({ at: start, point: part.report.before, dir: part.dir }, { at: end, point: part.report.after, dir: part.dir });
  }
  // Stable: a run's before stays ahead of its after at equal times.
  reads.sort((a, b) => a.at - b.at);
  for (const key of COUNTERS) {
    let last: { value: number; dir: string } | undefined;
    for (const read of reads) {
      const value = read.point?.[key];
      if (value == null) continue;
      if (last !== undefined && value < last.value) return `${key} (${last.dir} read ${last.value}, then ${read.dir} ${value})`;
      last = { value, dir: read.dir };
    }
  }
  return undefined;
}

/**
 * Merges the runs' reports of one /metrics page (see the comment at the top). `runs`: how many runs the merge
 * combines, so that runs without a report are named. Null (with a warning) when the runs scraped different pages or
 * engines, or a counter went back between them; the gauges' series are the runs' samples together on the merge's clock.
 */
export function mergeServerMetrics(parts: readonly ServerMetricsPart[], runs: number): MergedServerMetrics {
  if (parts.length === 0) return { report: null, warnings: [] };
  const warnings: string[] = [];
  const urls = [...new Set(parts.map((p) => p.report.url))];
  if (urls.length > 1) {
    return { report: null, warnings: [`server_metrics: the runs scraped different pages (${urls.join(', ')}), so their counters are left out: one server's counts cannot be told from another's`] };
  }
  const engines = [...new Set(parts.map((p) => p.report.engine))];
  if (engines.length > 1) return { report: null, warnings: [`server_metrics: the runs read ${urls[0]} as different engines (${engines.join(', ')}), so their counters are left out`] };
  if (parts.length < runs) {
    warnings.push(`server_metrics: ${parts.length} of the ${runs} merged runs scraped ${urls[0]}; the server's counters cover their windows only`);
  }
  const wentBack = counterThatWentBack(parts);
  const first = parts.reduce((a, b) => (span(b).start < span(a).start ? b : a));
  const last = parts.reduce((a, b) => (span(b).end >= span(a).end ? b : a));
  if (wentBack !== undefined) warnings.push(`server_metrics: a counter went back between the runs' reads, so the merged deltas are left out (a server restart?): ${wentBack}`);
  const series = parts.flatMap((p) => p.report.series.map((s) => ({ ...s, t_ms: Math.round(s.t_ms + p.offsetMs) }))).sort((a, b) => a.t_ms - b.t_ms);
  const before = first.report.before;
  const after = last.report.after;
  const deltas = counterDeltas(wentBack === undefined ? before : null, after);
  if (parts.length === 1) Object.assign(deltas, keptDeltas(first.report, deltas));
  return {
    report: {
      url: urls[0]!,
      scrapes: parts.reduce((n, p) => n + p.report.scrapes, 0),
      failures: parts.reduce((n, p) => n + p.report.failures, 0),
      last_error: [...parts].reverse().find((p) => p.report.last_error !== null)?.report.last_error ?? null,
      before,
      after,
      ...deltas,
      engine: engines[0]!,
      warning: parts.find((p) => p.report.warning !== null)?.report.warning ?? null,
      series: series.length > MAX_SAMPLES ? series.slice(0, MAX_SAMPLES) : series,
    },
    warnings,
  };
}

/** A lone run's own deltas where its file lacks the counters' values (files before schema 1.1.0 kept deltas only). */
function keptDeltas(report: ServerMetricsReport, deltas: CounterDeltas): Partial<CounterDeltas> {
  const kept: Partial<CounterDeltas> = {};
  for (const key of ['prompt_tokens', 'generation_tokens', 'requests'] as const) if (deltas[key] === null) kept[key] = report[key] ?? null;
  return kept;
}
