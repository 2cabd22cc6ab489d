import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/**
 * The server-side numbers chatload reads from a Prometheus `/metrics` page, under vLLM's names (v1 and older) and
 * SGLang's. Each is summed over label sets (one per model or engine); null when the server exposes none of the names.
 */
export interface ServerMetricsSnapshot {
  /** Prompt tokens looked up in the prefix cache (counter). */
  prefix_cache_queries: number | null;
  /** Prompt tokens the prefix cache supplied (counter). */
  prefix_cache_hits: number | null;
  requests_running: number | null;
  requests_waiting: number | null;
  /** KV cache usage, 0..1. */
  kv_cache_usage: number | null;
}

/** Names per quantity, first match wins. */
export const METRIC_NAMES: Record<keyof ServerMetricsSnapshot, readonly string[]> = {
  prefix_cache_queries: ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total', 'sglang:prompt_tokens_total'],
  prefix_cache_hits: ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total', 'sglang:cached_tokens_total'],
  requests_running: ['vllm:num_requests_running', 'sglang:num_running_reqs'],
  requests_waiting: ['vllm:num_requests_waiting', 'sglang:num_queue_reqs'],
  kv_cache_usage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage'],
};

/** Reads the quantities above from Prometheus text. Throws on text that is not the exposition format. */
export function parseServerMetrics(text: string): ServerMetricsSnapshot {
  const families = new Map<string, number>();
  for (const family of parsePrometheusTextFormat(text)) {
    let sum = 0;
    let any = false;
    for (const sample of family.metrics) {
      const value = Number(sample.value);
      if (sample.value !== undefined && Number.isFinite(value)) {
        sum += value;
        any = true;
      }
    }
    if (any) families.set(family.name, sum);
  }
  const pick = (names: readonly string[]): number | null => {
    for (const name of names) {
      const value = families.get(name) ?? families.get(name.replace(/_total$/, ''));
      if (value !== undefined) return value;
    }
    return null;
  };
  return {
    prefix_cache_queries: pick(METRIC_NAMES.prefix_cache_queries),
    prefix_cache_hits: pick(METRIC_NAMES.prefix_cache_hits),
    requests_running: pick(METRIC_NAMES.requests_running),
    requests_waiting: pick(METRIC_NAMES.requests_waiting),
    kv_cache_usage: pick(METRIC_NAMES.kv_cache_usage),
  };
}
