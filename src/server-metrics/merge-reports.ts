import { deltasOf, MAX_SAMPLES, SERVER_COUNTERS, type CounterDeltas, type ServerCounter, type ServerMetricsPoint, type ServerMetricsReport } from './scraper.js';

/*
 * The server's own counters across runs that scraped one server (`chatload merge`): shards on several machines each
 * read the same /metrics page before and after their own run. The server counts every request, so each shard's delta
 * already holds the others' traffic while they overlapped, and summing the deltas would count it again. Counters only
 * grow, so the merged window's delta is the last read less the first: per counter, the largest "after" less the
 * smallest "before", which needs no clock to say which read came first. That needs the counters' values, which
 * results.json keeps in `before` and `after` (the token counters from schema 1.1.0; an older file's runs merge their
 * prefix-cache counters only). A counter that went back (a server restart) breaks it, and is looked for where the
 * order of two reads is known: within a run, and between runs that did not overlap.
 */

/** One run's report, placed on the merge's clock (ms). */
export interface ServerMetricsPart {
  /** The run's folder, to name it in a warning. */
  dir: string;
  report: ServerMetricsReport;
  /** When the run's clock began (its records and its series move by the same). */
  offsetMs: number;
  /** Its first send and its last answer's end: its scrape before came before the one, its scrape after after the other. */
  startMs: number;
  endMs: number;
}

/** The merged report, or null with the reason in `warnings`. */
export interface MergedServerMetrics {
  report: ServerMetricsReport | null;
  warnings: string[];
}

const valueOf = (point: ServerMetricsPoint | null, key: ServerCounter): number | null => point?.[key] ?? null;

/**
 * A counter that went back between two reads whose order is known (a run's before and its after; one run's after and
 * the before of a run that started after it ended), as "counter (run A read X, then run B Y)"; undefined when none did.
 */
function counterThatWentBack(parts: readonly ServerMetricsPart[]): string | undefined {
  for (const key of SERVER_COUNTERS) {
    for (const a of parts) {
      const was = valueOf(a.report.after, key);
      if (was === null) continue;
      const own = valueOf(a.report.before, key);
      if (own !== null && was < own) return `${key} (${a.dir} read ${own} before its run, then ${was} after it)`;
      for (const b of parts) {
        const now = valueOf(b.report.before, key);
        if (b.startMs > a.endMs && now !== null && now < was) return `${key} (${a.dir} read ${was} after its run, then ${b.dir} ${now} before its later one)`;
      }
    }
  }
  return undefined;
}

/**
 * The merged window's deltas: per counter, the largest after less the smallest before, null when a run lacks the
 * counter on either side (its reads could be the window's ends). A lone run keeps its own deltas where its file had
 * no values (before schema 1.1.0).
 */
function mergedDeltas(parts: readonly ServerMetricsPart[]): CounterDeltas {
  return deltasOf((key) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (const { report } of parts) {
      const before = valueOf(report.before, key);
      const after = valueOf(report.after, key);
      if (before === null || after === null) return parts.length === 1 ? (report[key] ?? null) : null;
      lo = Math.min(lo, before);
      hi = Math.max(hi, after);
    }
    return hi - lo;
  });
}

const NO_DELTAS: CounterDeltas = deltasOf(() => null);

/**
 * Merges the runs' reports of one /metrics page (see the comment at the top). `runs`: how many runs the merge
 * combines, so that runs without a report are named. Null (with a warning) when the runs scraped different pages or
 * engines; the deltas null (with a warning) when a counter went back. `before` and `after` are the first-starting and
 * the last-ending run's reads; the gauges' series are the runs' samples together on the merge's clock.
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
  if (parts.length < runs) warnings.push(`server_metrics: ${parts.length} of the ${runs} merged runs scraped ${urls[0]}; the server's counters cover their windows only`);
  const wentBack = counterThatWentBack(parts);
  if (wentBack !== undefined) warnings.push(`server_metrics: a counter went back between two reads, so the merged deltas are left out (a server restart?): ${wentBack}`);
  const failed = parts.filter((p) => p.report.before === null || p.report.after === null).map((p) => p.dir);
  if (failed.length > 0 && parts.length > 1) warnings.push(`server_metrics: the scrape before or after the run failed in ${failed.join(', ')}, so the merged deltas are unknown`);
  const first = parts.reduce((a, b) => (b.startMs < a.startMs ? b : a));
  const last = parts.reduce((a, b) => (b.endMs >= a.endMs ? b : a));
  const series = parts.flatMap((p) => p.report.series.map((s) => ({ ...s, t_ms: Math.round(s.t_ms + p.offsetMs) }))).sort((a, b) => a.t_ms - b.t_ms);
  return {
    report: {
      url: urls[0]!,
      scrapes: parts.reduce((n, p) => n + p.report.scrapes, 0),
      failures: parts.reduce((n, p) => n + p.report.failures, 0),
      last_error: [...parts].sort((a, b) => a.endMs - b.endMs).reverse().find((p) => p.report.last_error !== null)?.report.last_error ?? null,
      before: first.report.before,
      after: last.report.after,
      ...(wentBack === undefined ? mergedDeltas(parts) : NO_DELTAS),
      engine: engines[0]!,
      warning: parts.find((p) => p.report.warning !== null)?.report.warning ?? null,
      series: series.length > MAX_SAMPLES ? series.slice(0, MAX_SAMPLES) : series,
    },
    warnings,
  };
}
