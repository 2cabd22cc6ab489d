// The serving engines chatload knows: where each one publishes the numbers chatload reads from /metrics, and how
// --reset-prefix-cache empties its prefix cache. Every name here was read from the engine's own source; the table in
// docs/ENGINES.md says which file.

/** A serving engine chatload can recognise. `unknown` when nothing identified the server. */
export type EngineName = 'vllm' | 'sglang' | 'llamacpp' | 'tgi' | 'dynamo' | 'chatload-sim' | 'unknown';

/** Every engine name, in the order their metric names are tried when the engine is unknown. */
export const ENGINE_NAMES: readonly EngineName[] = ['vllm', 'sglang', 'llamacpp', 'tgi', 'dynamo', 'chatload-sim', 'unknown'];

/**
 * Where one /metrics quantity is read: a metric family name, or several whose values add up (all must be present).
 * A family's value is the sum over its label sets; for a histogram or summary family, the sum of its `_sum`.
 */
export type MetricSource = string | { readonly sum: readonly string[] };

/** The /metrics quantities chatload reads, each with its sources in order of preference (the first present wins). */
export interface MetricNameMap {
  /** Prompt tokens looked up in the prefix cache (counter, tokens). */
  readonly prefix_cache_queries: readonly MetricSource[];
  /** Prompt tokens the prefix cache supplied (counter, tokens). */
  readonly prefix_cache_hits: readonly MetricSource[];
  /** Requests being processed now (gauge). */
  readonly requests_running: readonly MetricSource[];
  /** Requests queued, not yet running (gauge). */
  readonly requests_waiting: readonly MetricSource[];
  /** KV cache usage, 0..1 (gauge). */
  readonly kv_cache_usage: readonly MetricSource[];
  /** Prompt tokens processed (counter, tokens; what each engine counts differs, see docs/ENGINES.md). */
  readonly prompt_tokens: readonly MetricSource[];
  /** Generated tokens (counter, tokens). */
  readonly generation_tokens: readonly MetricSource[];
  /** Requests finished (counter): per-replica totals by deltas (docs/METRICS.md, "Replicas"). */
  readonly requests: readonly MetricSource[];
}

/**
 * How --reset-prefix-cache empties an engine's prefix cache: one POST, llama.cpp's per-slot erase, the known
 * endpoints tried in turn (unknown engines), or nothing (the engine has no such endpoint; `reason` says so).
 */
export type CacheResetMethod =
  | { readonly kind: 'post'; readonly path: string; readonly refusedHint: string }
  | { readonly kind: 'llamacpp-slots' }
  | { readonly kind: 'try'; readonly paths: readonly string[] }
  | { readonly kind: 'none'; readonly reason: string };

/** What chatload knows of one engine. */
export interface EngineProfile {
  readonly name: EngineName;
  /** The engine's name for people, e.g. `vLLM`. */
  readonly label: string;
  /** The prefix of its /metrics names (`vllm:`, `tgi_`), or null. */
  readonly metricPrefix: string | null;
  readonly metrics: MetricNameMap;
  readonly reset: CacheResetMethod;
}

const NO_METRICS: MetricNameMap = {
  prefix_cache_queries: [],
  prefix_cache_hits: [],
  requests_running: [],
  requests_waiting: [],
  kv_cache_usage: [],
  prompt_tokens: [],
  generation_tokens: [],
  requests: [],
};

// vllm/v1/metrics/loggers.py (v1 names) and the older V0 names (gpu_prefix_cache_*, gpu_cache_usage_perc).
const VLLM_METRICS: MetricNameMap = {
  prefix_cache_queries: ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total'],
  prefix_cache_hits: ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'],
  requests_running: ['vllm:num_requests_running'],
  // vllm/v1/metrics/loggers.py: vllm:request_success, labelled by finished_reason (summed).
  requests: ['vllm:request_success_total'],
  requests_waiting: ['vllm:num_requests_waiting'],
  kv_cache_usage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
  prompt_tokens: ['vllm:prompt_tokens_total'],
  generation_tokens: ['vllm:generation_tokens_total'],
};

/** Every engine's profile. */
export const ENGINE_PROFILES: Readonly<Record<EngineName, EngineProfile>> = {
  vllm: {
    name: 'vllm',
    label: 'vLLM',
    metricPrefix: 'vllm:',
    metrics: VLLM_METRICS,
    // vllm/entrypoints/serve/cache/api_router.py: mounted only with VLLM_SERVER_DEV_MODE=1 (404 otherwise).
    reset: { kind: 'post', path: '/reset_prefix_cache', refusedHint: 'vLLM serves it only with VLLM_SERVER_DEV_MODE=1' },
  },
  sglang: {
    name: 'sglang',
    label: 'SGLang',
    metricPrefix: 'sglang:',
    // python/sglang/srt/metrics/collector.py: prompt_tokens_total counts every prompt token (cached ones included),
    // cached_tokens_total the cached ones (newer versions split it by a cache_source label, summed here).
    metrics: {
      prefix_cache_queries: ['sglang:prompt_tokens_total'],
      prefix_cache_hits: ['sglang:cached_tokens_total'],
      requests_running: ['sglang:num_running_reqs'],
      // python/sglang/srt/metrics/collector.py: "Number of requests processed."
      requests: ['sglang:num_requests_total'],
      requests_waiting: ['sglang:num_queue_reqs'],
      kv_cache_usage: ['sglang:token_usage'],
      prompt_tokens: ['sglang:prompt_tokens_total'],
      generation_tokens: ['sglang:generation_tokens_total'],
    },
    // python/sglang/srt/entrypoints/http_server.py: 400 while requests are running or waiting.
    reset: { kind: 'post', path: '/flush_cache', refusedHint: 'SGLang refuses to flush while requests are running or waiting' },
  },
  llamacpp: {
    name: 'llamacpp',
    label: 'llama.cpp',
    metricPrefix: 'llamacpp:',
    // tools/server/server-task.cpp (to_metrics): prompt_tokens_total EXCLUDES the cached tokens, so the tokens looked
    // up are processed + cached. Checked against a live llama-server (issue #12). kv_cache_usage_ratio is the name
    // older builds exposed; current ones have no KV usage gauge.
    metrics: {
      prefix_cache_queries: [{ sum: ['llamacpp:prompt_tokens_total', 'llamacpp:prompt_tokens_cached_total'] }],
      prefix_cache_hits: ['llamacpp:prompt_tokens_cached_total'],
      requests_running: ['llamacpp:requests_processing'],
      requests_waiting: ['llamacpp:requests_deferred'],
      requests: [],
      kv_cache_usage: ['llamacpp:kv_cache_usage_ratio'],
      prompt_tokens: [{ sum: ['llamacpp:prompt_tokens_total', 'llamacpp:prompt_tokens_cached_total'] }],
      generation_tokens: ['llamacpp:tokens_predicted_total'],
    },
    reset: { kind: 'llamacpp-slots' },
  },
  tgi: {
    name: 'tgi',
    label: 'TGI',
    metricPrefix: 'tgi_',
    // router/src/server.rs and backends/v3: no prefix-cache counter and no KV usage gauge; token counts are histograms.
    metrics: {
      ...NO_METRICS,
      requests_running: ['tgi_batch_current_size'],
      requests_waiting: ['tgi_queue_size'],
      prompt_tokens: ['tgi_request_input_length'],
      generation_tokens: ['tgi_request_generated_tokens'],
    },
    reset: { kind: 'none', reason: 'TGI has no endpoint that empties its prefix cache' },
  },
  dynamo: {
    name: 'dynamo',
    label: 'NVIDIA Dynamo',
    metricPrefix: 'dynamo_frontend_',
    // The frontend's page (lib/runtime/src/metrics/prometheus_names.rs, frontend_service, prefix dynamo_frontend_): its
    // workers' engine counters are on the workers' own pages, not here; its cached_tokens histogram is left unread (see
    // docs/ENGINES.md). Token counts are histograms (their _sum read); requests_total is labelled by status (summed).
    metrics: {
      ...NO_METRICS,
      requests_running: ['dynamo_frontend_inflight_requests'],
      requests_waiting: ['dynamo_frontend_queued_requests'],
      requests: ['dynamo_frontend_requests_total'],
      prompt_tokens: ['dynamo_frontend_input_sequence_tokens'],
      generation_tokens: ['dynamo_frontend_output_tokens_total'],
    },
    // lib/llm/src/http/service/clear_kv_blocks.rs: POST /clear_kv_blocks answers 200 whether or not any worker was
    // cleared (the failures are in its body), so a reset could not be told from none.
    reset: { kind: 'none', reason: "NVIDIA Dynamo's POST /clear_kv_blocks answers 200 whether or not its workers' caches were emptied, so chatload does not rely on it" },
  },
  'chatload-sim': {
    name: 'chatload-sim',
    label: "chatload's simulator",
    // The simulator publishes vLLM's names (src/sim/metrics.ts) plus its own chatload_sim_* gauges.
    metricPrefix: 'chatload_sim_',
    metrics: VLLM_METRICS,
    reset: { kind: 'post', path: '/reset_prefix_cache', refusedHint: 'the simulator always serves it' },
  },
  unknown: {
    name: 'unknown',
    label: 'unknown engine',
    metricPrefix: null,
    metrics: NO_METRICS,
    reset: { kind: 'try', paths: ['/reset_prefix_cache', '/flush_cache'] },
  },
};

/** `engine` for messages: its label (`vLLM`, `llama.cpp`), or `the server (engine not identified)`. */
export function engineDisplayName(engine: EngineName): string {
  return engine === 'unknown' ? 'the server (engine not identified)' : ENGINE_PROFILES[engine].label;
}

/**
 * The metric sources to read for `engine`: its own first, then every other engine's, so a misidentified server (or
 * a proxy that exposes another engine's names) is still read.
 */
export function metricNamesFor(engine: EngineName): MetricNameMap {
  const order = [engine, ...ENGINE_NAMES.filter((name) => name !== engine)];
  const merged = {} as Record<keyof MetricNameMap, MetricSource[]>;
  for (const key of Object.keys(NO_METRICS) as (keyof MetricNameMap)[]) {
    const seen = new Set<string>();
    merged[key] = [];
    for (const name of order) {
      for (const source of ENGINE_PROFILES[name].metrics[key]) {
        const id = typeof source === 'string' ? source : source.sum.join('+');
        if (seen.has(id)) continue;
        seen.add(id);
        merged[key].push(source);
      }
    }
  }
  return merged;
}
