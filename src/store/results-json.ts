import type { Peaks } from '../metrics/peak-bins.js';
import { cpus, totalmem } from 'node:os';
import type { ClientHealth } from '../metrics/client-health.js';
import type { ConversationCounts } from '../metrics/conversation-counts.js';
import type { SerializedHistograms } from '../metrics/histogram.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import { populationStd } from '../metrics/stats.js';
import type { Summary } from '../metrics/summary.js';
import { redactSecrets } from './redact.js';
import { chatloadVersion } from '../util/version.js';
import { FLAT_METRICS, FLAT_PERCENTILES } from './results-document.js';
import type { MergeFields, ResultsCommon, ResultsConfig, ResultsDocument, ResultsEnvironment, RunFields, VllmFlatKeys } from './results-document.js';
import { RESULTS_SCHEMA_VERSION } from './schema-version.js';

export { redactSecrets } from './redact.js';
export { writeJsonAtomic } from './atomic-write.js';
export type * from './results-document.js';
export { FLAT_METRICS, FLAT_PERCENTILES } from './results-document.js';


/** The fields a writer gives buildResultsDocument as they are: a run's (RunFields) or a merge's (MergeFields). */
export type ResultsExtra = Pick<ResultsCommon, 'conversation_stats' | 'agentic' | 'per_conversation' | 'warnings'> & (RunFields | MergeFields);

/** What buildResultsDocument needs. */
export interface ResultsInput {
  config: ResultsConfig;
  summary: Summary;
  warmupPercentages: Record<string, Summary>;
  perTurn: TurnSummary[];
  clientHealth: ClientHealth | null;
  /** How the dataset's conversations ended; null when unknown. */
  conversations: ConversationCounts | null;
  /** Latency histograms (analyzeRecords' `histograms`); left out of the document when absent. */
  histograms?: SerializedHistograms;
  /** --percentile-metrics: the metrics whose extra percentiles (Stats.percentiles) get flat keys. @default all four */
  percentileMetrics?: readonly string[];
  /** The run's per-second peaks (RunAnalysis.peaks), written as `vllm bench serve`'s flat keys; absent when unknown. */
  peaks?: Peaks;
  /** The run's or the merge's own fields, added at the top level. */
  extra: ResultsExtra;
  /** The document's creation time; defaults to now. */
  createdAt?: Date;
}

/** Assembles results.json, with its schema_version. The config (and extra) go through redactSecrets() again, defensively. */
export function buildResultsDocument(input: ResultsInput): ResultsDocument {
  const s = input.summary;
  return {
    ...redactSecrets(input.extra),
    schema_version: RESULTS_SCHEMA_VERSION,
    chatload_version: chatloadVersion(),
    created_at: (input.createdAt ?? new Date()).toISOString(),
    config: redactSecrets(input.config),
    environment: describeEnvironment(),
    summary: s,
    warmup_percentages: input.warmupPercentages,
    per_turn: input.perTurn,
    client_health: input.clientHealth,
    conversations: input.conversations,
    dropped_requests: input.conversations?.dropped ?? 0,
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
