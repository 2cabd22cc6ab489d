// results.json's types: the published contract. schema/results.schema.json is generated from ResultsDocument by
// `npm run schema` (tools/schema.ts); its version is RESULTS_SCHEMA_VERSION (schema-version.ts), docs/REPORTS.md.
// A field written into results.json must be declared here (RunFields for a run's, MergeFields for a merge's).
import type { GpuResults } from '../metrics/gpu-types.js';
import type { AgenticSummary } from '../metrics/agentic-tally.js';
import type { ClientHealth } from '../metrics/client-health.js';
import type { ConversationCounts } from '../metrics/conversation-counts.js';
import type { ErrorCount } from '../metrics/error-tally.js';
import type { SerializedHistograms } from '../metrics/histogram.js';
import type { Peaks } from '../metrics/peak-bins.js';
import type { ConversationStats, ConversationSummary } from '../metrics/per-conversation.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import type { RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import type { ReplicaRow } from '../metrics/replica-types.js';
import type { StatField } from '../metrics/stats.js';
import type { Summary } from '../metrics/summary.js';
import type { RunOptionsInput } from '../options/run-options-input.js';
import type { EngineInfo } from '../server-engine/detect.js';
import type { CacheHitRates } from '../server-metrics/compare.js';
import type { ServerMetricsReport } from '../server-metrics/scraper.js';

/** Where the run happened (no hostname: results files get shared). */
export interface ResultsEnvironment {
  /** Node.js version, e.g. "v20.19.0". */
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
  /** Good requests per second, as vllm bench serve: only when --goodput set objectives. */
  request_goodput?: number;
} & { [K in `${'mean' | 'median' | 'std'}_${FlatMetric}_ms`]: number | null } & {
  [K in `p${FlatPercentile}_${FlatMetric}_ms`]: number | null;
} & {
  /** --metric-percentiles past the fixed ones, for the --percentile-metrics asked: e.g. p95_ttft_ms, p99.5_e2el_ms. */
  [extra: `p${number}_${FlatMetric}_ms`]: number | null;
};

/**
 * The run's options as results.json records them: under their library keys (docs/OPTIONS.md), as given, with their
 * defaults; secrets replaced by "[redacted]" and every --header value hidden.
 */
export type ResultsConfig = RunOptionsInput;

/** Why the run stopped (the engine's StopReason; `output_error`: a record could not be written). */
export type ResultsStopReason = 'completed' | 'out_of_work' | 'max_requests' | 'duration' | 'benchmark_timeout' | 'interrupted' | 'output_error';

/** What --scrape-metrics read from the server's /metrics, with the three views of the cache hit rate. */
export type ResultsServerMetrics = ServerMetricsReport & { cache_hit_rates: CacheHitRates };

/** What every results.json holds, a run's or a merge's. */
export type ResultsCommon = {
  /**
   * The version of this schema (semver, docs/REPORTS.md); absent in files of chatload before it had one.
   * @pattern ^\d+\.\d+\.\d+$
   */
  schema_version: string;
  chatload_version: string;
  /** ISO 8601, UTC. */
  created_at: string;
  /** The run's options (a merge: its first finished run's). */
  config: ResultsConfig;
  environment: ResultsEnvironment;
  summary: Summary;
  /** One summary per --warmup-percentages value, keyed "0%", "50%", ... */
  warmup_percentages: { [cut: string]: Summary };
  per_turn: TurnSummary[];
  client_health: ClientHealth | null;
  /** How the dataset's conversations ended; null when unknown (a merge of unfinished runs only). */
  conversations: ConversationCounts | null;
  /** Requests dropped at a full --max-queue (k6's dropped_iterations); each ended its conversation (`conversations.dropped`). */
  dropped_requests: number;
  /**
   * TTFT, TPOT, ITL and E2EL of the summary's population as serialized LatencyHistograms, so that shards merge without
   * their records (`chatload merge --max-records`). Absent when the writer did not compute them.
   */
  histograms?: SerializedHistograms;
  /** Tallies of the run's conversations (lengths, durations). */
  conversation_stats: ConversationStats;
  /** Tool calls, their time, divergences from the dataset and sub-agent requests; null when none. */
  agentic: AgenticSummary | null;
  /** One row per conversation. */
  per_conversation: ConversationSummary[];
  /** What the run (or the merge) warned about. */
  warnings: string[];
} & VllmFlatKeys &
  Partial<Peaks>;

/** What a run adds: how it ran and against what. */
export interface RunFields {
  /** The keys of `config` whose values are defaults, not given. */
  defaulted_options: string[];
  model: string;
  /** The serving engine detected behind the URL. */
  engine: EngineInfo;
  /** The server's URL, credentials redacted, or "embedded simulator". */
  url: string;
  /** The dataset file, or "built-in demo". */
  dataset: string;
  /** The load model's name, e.g. "fixed-clients", "open-sessions". */
  load_model: string;
  /** Worker threads (1: the main thread alone). */
  workers: number;
  /** Each worker thread's client health (null for a thread that reported none); null without worker threads. */
  worker_health: Array<ClientHealth | null> | null;
  /** --shard as "I/N"; null when not sharded. */
  shard: string | null;
  stop_reason: ResultsStopReason;
  /** Records that could not be written to requests.jsonl (stop_reason output_error); 0 otherwise. */
  lost_records: number;
  /** The tokenizer token counts and the expected-cache model used. */
  tokenizer: string;
  /** True when the token counts are the server's own tokenizer's (or its usage), not approximate. */
  token_counts_exact: boolean;
  /** Image parts in the dataset's messages. */
  dataset_image_parts: number;
  /** Audio parts (`input_audio`) in the dataset's messages. */
  dataset_audio_parts: number;
  /** Client tasks that threw and were recorded (0 in a healthy run). */
  crashed_tasks: number;
  /** The most frequent distinct error messages (at most 10), warmup included. */
  top_errors: ErrorCount[];
  /** Impossible usage fields the server sent, by field (count of responses). */
  invalid_usage: { [field: string]: number };
  /** Actual against expected cached tokens, and which expected-cache model ran. */
  prefix_cache: RunPrefixCache;
  /** What --scrape-metrics read from the server; null without it. */
  server_metrics: ResultsServerMetrics | null;
  /** GPU power, utilisation and energy from a DCGM exporter page among --scrape-metrics; null without one (docs/METRICS.md). */
  gpu: GpuResults | null;
  /**
   * One row per replica behind a router (issue #31): from each response's --replica-header, or from the counter deltas
   * of a repeated --scrape-metrics's pages; null when the run could not tell the replicas apart (docs/METRICS.md).
   */
  replicas: ReplicaRow[] | null;
}

/** One run a merge combined. */
export interface MergedRun {
  /** The run's folder, absolute. */
  dir: string;
  /** True when it had a results.json. */
  finished: boolean;
  /** Its records (count). */
  records: number;
  /** Its --shard ("I/N"); null when not sharded or unknown. */
  shard: string | null;
  client_health: ClientHealth | null;
}

/**
 * What a merge adds: the runs it combined, facts of the first finished one, the merged records' prefix_cache (per-shard
 * scope), and the server's counters over the runs' windows together (`server_metrics`, from the runs that scraped one
 * page; null when none did or they cannot be merged, absent in merges before schema 1.1.0).
 */
export type MergeFields = Partial<Pick<RunFields, 'model' | 'url' | 'dataset' | 'stop_reason' | 'tokenizer' | 'crashed_tasks' | 'prefix_cache' | 'server_metrics'>> & {
  /** The first finished run's engine (a warning names each when they differ); absent before schema 1.3.0. */
  engine?: EngineInfo;
  /** True when every finished run's token counts were exact (the runs' `token_counts_exact`); absent before schema 1.3.0. */
  token_counts_exact?: boolean;
  /** "histogram" when the statistics come from histograms (past --max-records); absent when exact. */
  merge_mode?: 'histogram';
  merged_from: MergedRun[];
  /** Actual against expected cached tokens from the merged records (scope per-shard when several runs); absent when no run had it. */
  prefix_cache?: RunPrefixCache;
  /** One row per replica, rebuilt from the merged records' `replica`; null when none named one. */
  replicas: ReplicaRow[] | null;
};

/** A run's results.json. */
export type RunResultsDocument = ResultsCommon & RunFields;
/** A merge's results.json (`chatload merge`). */
export type MergedResultsDocument = ResultsCommon & MergeFields;

/** results.json: everything about a run (or a merge of runs) in one document. Layout in docs/METRICS.md and REPORTS.md. */
export type ResultsDocument = RunResultsDocument | MergedResultsDocument;
