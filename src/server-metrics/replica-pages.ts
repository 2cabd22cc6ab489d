import type { ReplicaRow } from '../metrics/replica-tally.js';
import type { ServerMetricsReport } from './scraper.js';

/**
 * results.json's `replicas` from several --scrape-metrics pages, one per replica, when no response header named the
 * replica of each request: each page's counter deltas over the run (requests finished, prompt tokens, prefix-cache
 * hits). Per replica only: deltas taken before and after the run cannot say which request a replica served, so records
 * keep `replica: null` and the expected-cache model has no per-replica figure (docs/METRICS.md, "Replicas"). Only pages
 * with an engine's counters are replicas, and null when fewer than two are: one page is the server's, not a replica's.
 */
export function replicaRowsFromPages(pages: readonly ServerMetricsReport[]): ReplicaRow[] | null {
  // A replica's page has an engine's counters; a page of another kind (a GPU exporter's) is not a replica.
  const replicas = pages.filter((page) => page.requests != null || page.prompt_tokens !== null || page.prefix_cache_hits !== null);
  if (replicas.length < 2) return null;
  return replicas.map((page) => ({
    replica: page.url,
    requests: page.requests ?? null,
    input_tokens: page.prompt_tokens,
    cached_tokens: page.prefix_cache_hits,
    expected_cached_tokens: null,
    // The server's own ratio (hits over the tokens it looked up), as server_metrics.server_cache_hit_rate.
    hit_ratio: page.server_cache_hit_rate,
    efficiency: null,
    source: 'metrics' as const,
  }));
}
