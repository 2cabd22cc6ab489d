import type { TargetPlan } from '../options/run-plan.js';
import type { Summary } from '../metrics/summary.js';
import type { ServerMetricsReport } from './scraper.js';

/** The /metrics URL to scrape: --scrape-metrics URL, or <server>/metrics for a bare --scrape-metrics; undefined when off. */
export function scrapeUrl(options: Pick<TargetPlan, 'scrapeMetrics'>, serverUrl: string): string | undefined {
  if (options.scrapeMetrics === false) return undefined;
  return typeof options.scrapeMetrics === 'string' ? options.scrapeMetrics : `${serverUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/metrics`;
}

/**
 * The scrape report with the three views of the cache side by side: what the server's counters say
 * (hits / queries), what the responses' usage said (cached / input tokens), and what the history the client sent
 * made possible (expected cached / input tokens). The server counts every request in the window, warmup included.
 */
export function compareCacheCounts(report: ServerMetricsReport, summary: Summary): ServerMetricsReport & { cache_hit_rates: CacheHitRates } {
  return { ...report, cache_hit_rates: cacheHitRates(report, summary) };
}

/** The prefix-cache hit rate three ways: the server's counters, the responses' usage, and the sent history's bound. */
export interface CacheHitRates {
  server_counters: number | null;
  response_usage: number | null;
  client_expected: number | null;
}

/** See compareCacheCounts. */
export function cacheHitRates(report: ServerMetricsReport, summary: Summary): CacheHitRates {
  return {
    server_counters: report.server_cache_hit_rate,
    response_usage: summary.cache_hit_ratio,
    client_expected: summary.total_input_tokens > 0 ? summary.total_expected_cached_tokens / summary.total_input_tokens : null,
  };
}
