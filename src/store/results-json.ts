import type { Peaks } from '../metrics/peak-bins.js';
import { cpus, totalmem } from 'node:os';
import type { ClientHealth } from '../metrics/client-health.js';
import type { SerializedHistograms } from '../metrics/histogram.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import { populationStd, type StatField } from '../metrics/stats.js';
import type { Summary } from '../metrics/summary.js';
import { redactSecrets } from './redact.js';
import { chatloadVersion } from '../util/version.js';

export { redactSecrets } from './redact.js';
export { writeJsonAtomic } from './atomic-write.js';

/** Where the run happened (no hostname: results files get shared). */
export interface ResultsEnvironment {
  node: string;
  platform: string;
  arch: string;
  /** Logical CPUs. */
  cpus: number;
  cpu_model: string | null;
  total_memory_mb: number;
}

/** The latency metrics that get vllm-style flat keys. */
export const FLAT_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const;
/** The percentiles that get flat keys, named as vllm names them: p25, p50, ..., p99, p99.9. */
export const FLAT_PERCENTILES = [
  ['25', 'p25'],
  ['50', 'p50'],
  ['75', 'p75'],
  ['90', 'p90'],
  ['99', 'p99'],
  ['99.9', 'p99_9'],
] as const satisfies ReadonlyArray<readonly [string, StatField]>;

type FlatMetric = (typeof FLAT_METRICS)[number];
type FlatPercentile = (typeof FLAT_PERCENTILES)[number][0];

/** The flat keys of `vllm bench serve`'s result JSON. Latencies in ms; null where there was no value (vllm writes 0). */
export type VllmFlatKeys = {
  completed: number;
  failed: number;
  /** Seconds: the summary's runtime_sec. */
  duration: number;
  request_throughput: number;
  output_throughput: number;
  total_token_throughput: number;
  total_input_tokens: number;
  total_output_tokens: number;
} & { [K in `${'mean' | 'median' | 'std'}_${FlatMetric}_ms`]: number | null } & {
  [K in `p${FlatPercentile}_${FlatMetric}_ms`]: number | null;
};

/** results.json: everything about a run in one document. Layout in docs/METRICS.md. */
export type ResultsDocument = {
  chatload_version: string;
  /** ISO 8601, UTC. */
  created_at: string;
  /** The run's options, redacted. */
  config: Record<string, unknown>;
  environment: ResultsEnvironment;
  summary: Summary;
  /** One summary per --warmup-percentages value, keyed "0%", "50%", ... */
  warmup_percentages: Record<string, Summary>;
  per_turn: TurnSummary[];
  client_health: ClientHealth | null;
  /** The engine's conversation counts (completed / unfinished / not started), passed through. */
  conversations: Record<string, unknown>;
  /** Requests dropped at a full --max-queue (k6's dropped_iterations): each ended its conversation (`conversations.dropped`). */
  dropped_requests: number;
  /**
   * TTFT, TPOT, ITL and E2EL of the summary's population as serialized LatencyHistograms, so that shards merge without
   * their records (`chatload merge --max-records`). Absent when the writer did not compute them.
   */
  histograms?: SerializedHistograms;
} & VllmFlatKeys &
  Record<string, unknown>;

/** What buildResultsDocument needs. `extra` keys are added at the top level but cannot replace the keys above. */
export interface ResultsInput {
  config: Record<string, unknown>;
  summary: Summary;
  warmupPercentages: Record<string, Summary>;
  perTurn: TurnSummary[];
  clientHealth: ClientHealth | null;
  conversations: Record<string, unknown>;
  /** Latency histograms (analyzeRecords' `histograms`); left out of the document when absent. */
  histograms?: SerializedHistograms;
  /** --percentile-metrics: the metrics whose extra percentiles (Stats.percentiles) get flat keys. @default all four */
  percentileMetrics?: readonly string[];
  /** The run's per-second peaks (RunAnalysis.peaks), written as `vllm bench serve`'s flat keys; absent when unknown. */
  peaks?: Peaks;
  extra?: Record<string, unknown>;
  /** The document's creation time; defaults to now. */
  createdAt?: Date;
}

/** Assembles results.json. The config (and extra) go through redactSecrets() again, defensively. */
export function buildResultsDocument(input: ResultsInput): ResultsDocument {
  const s = input.summary;
  return {
    ...redactSecrets(input.extra ?? {}),
    chatload_version: chatloadVersion(),
    created_at: (input.createdAt ?? new Date()).toISOString(),
    config: redactSecrets(input.config),
    environment: describeEnvironment(),
    summary: s,
    warmup_percentages: input.warmupPercentages,
    per_turn: input.perTurn,
    client_health: input.clientHealth,
    conversations: input.conversations,
    dropped_requests: typeof input.conversations.dropped === 'number' ? input.conversations.dropped : 0,
    ...(input.histograms === undefined ? {} : { histograms: input.histograms }),
    ...vllmFlatKeys(s, input.percentileMetrics),
    ...(input.peaks ?? {}),
  };
}

/** The flat `vllm bench serve` keys of a summary. std_* is the population std (numpy's np.std), as vllm computes it. */
export function vllmFlatKeys(s: Summary, percentileMetrics: readonly string[] = FLAT_METRICS): VllmFlatKeys {
  const flat: Record<string, number | null> = {
    completed: s.completed,
    failed: s.failed,
    duration: s.runtime_sec,
    request_throughput: s.request_throughput,
    output_throughput: s.output_throughput,
    total_token_throughput: s.total_token_throughput,
    total_input_tokens: s.total_input_tokens,
    total_output_tokens: s.total_output_tokens,
  };
  // As vllm bench serve: request_goodput (good requests per second) only when --goodput set objectives.
  if (s.goodput !== null) flat.request_goodput = s.goodput.request_goodput;
  for (const metric of FLAT_METRICS) {
    const stats = s.metrics[`${metric}_ms`];
    flat[`mean_${metric}_ms`] = stats?.mean ?? null;
    flat[`median_${metric}_ms`] = stats?.p50 ?? null;
    flat[`std_${metric}_ms`] = stats === null ? null : populationStd(stats);
    for (const [name, field] of FLAT_PERCENTILES) flat[`p${name}_${metric}_ms`] = stats?.[field] ?? null;
    // --metric-percentiles past the fixed ones, for the --percentile-metrics asked (their Stats carry them).
    if (!percentileMetrics.includes(metric)) continue;
    for (const [key, value] of Object.entries(stats?.percentiles ?? {})) flat[`p${key}_${metric}_ms`] ??= value;
  }
  return flat as VllmFlatKeys;
}

function describeEnvironment(): ResultsEnvironment {
  const cpuList = cpus();
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpus: cpuList.length,
    cpu_model: cpuList[0]?.model.trim() ?? null,
    total_memory_mb: Math.round(totalmem() / (1024 * 1024)),
  };
}
