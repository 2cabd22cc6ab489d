import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { metricNamesFor, type EngineName, type MetricSource } from '../server-engine/profiles.js';
import { readDcgm, type DcgmPage } from './dcgm.js';

/**
 * The server-side numbers chatload reads from a Prometheus `/metrics` page, under the names of the detected engine
 * (then every other engine chatload knows: vLLM v1 and older, SGLang, llama.cpp, TGI). Each is summed over label
 * sets (one per model or engine); null when the server exposes none of the names.
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

/** One page read in full: the snapshot, the token counters, and every metric family name on the page. */
export interface ServerMetricsReading {
  snapshot: ServerMetricsSnapshot;
  /** Prompt tokens processed (counter), as the engine counts them; null when absent. */
  prompt_tokens: number | null;
  /** Generated tokens (counter); null when absent. */
  generation_tokens: number | null;
  /** Requests finished (counter); null when absent. */
  requests: number | null;
  /** Every family name on the page, in page order. */
  families: string[];
  /** The GPUs, when the page is NVIDIA dcgm-exporter's (a GPU page can share --scrape-metrics); null otherwise. */
  gpu: DcgmPage | null;
}

/** Reads every quantity chatload knows from Prometheus text. Throws on text that is not the exposition format. */
export function readServerMetrics(text: string, engine: EngineName = 'unknown'): ServerMetricsReading {
  const families = new Map<string, number>();
  const parsed = parsePrometheusTextFormat(text);
  for (const family of parsed) {
    let sum = 0;
    let any = false;
    for (const sample of family.metrics) {
      // A histogram or summary has no value of its own: its `_sum` is the total (e.g. TGI's input lengths).
      const raw = sample.value ?? sample.sum;
      const value = Number(raw);
      if (raw !== undefined && Number.isFinite(value)) {
        sum += value;
        any = true;
      }
    }
    if (any) families.set(family.name, sum);
  }
  const valueOf = (name: string): number | undefined => families.get(name) ?? families.get(name.replace(/_total$/, ''));
  const read = (source: MetricSource): number | undefined => {
    if (typeof source === 'string') return valueOf(source);
    let total = 0;
    for (const name of source.sum) {
      const value = valueOf(name);
      if (value === undefined) return undefined;
      total += value;
    }
    return total;
  };
  const pick = (sources: readonly MetricSource[]): number | null => {
    for (const source of sources) {
      const value = read(source);
      if (value !== undefined) return value;
    }
    return null;
  };
  const names = metricNamesFor(engine);
  return {
    snapshot: {
      prefix_cache_queries: pick(names.prefix_cache_queries),
      prefix_cache_hits: pick(names.prefix_cache_hits),
      requests_running: pick(names.requests_running),
      requests_waiting: pick(names.requests_waiting),
      kv_cache_usage: pick(names.kv_cache_usage),
    },
    prompt_tokens: pick(names.prompt_tokens),
    generation_tokens: pick(names.generation_tokens),
    requests: pick(names.requests),
    families: [...families.keys()],
    gpu: readDcgm(parsed),
  };
}

/** Reads the snapshot quantities from Prometheus text. Throws on text that is not the exposition format. */
export function parseServerMetrics(text: string, engine: EngineName = 'unknown'): ServerMetricsSnapshot {
  return readServerMetrics(text, engine).snapshot;
}

/** The distinct name prefixes among `families` (`vllm:`, `tgi_`, `process_`), at most `limit`, for messages. */
export function metricPrefixes(families: readonly string[], limit = 8): string[] {
  const prefixes = new Set<string>();
  for (const name of families) {
    const colon = name.indexOf(':');
    const underscore = name.indexOf('_');
    prefixes.add(colon > 0 ? name.slice(0, colon + 1) : underscore > 0 ? name.slice(0, underscore + 1) : name);
    if (prefixes.size >= limit) break;
  }
  return [...prefixes];
}
