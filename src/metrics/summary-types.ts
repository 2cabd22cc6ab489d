// The shapes of a run summary (results.json's `summary` and `warmup_percentages`), apart from the code that builds them
// (summary-builder.ts), so that the builder's parts can name them without importing each other.
import type { ErrorKind } from '../client/types.js';
import type { Goodput } from './goodput.js';
import type { RequestRecord } from './record.js';
import type { Stats } from './stats.js';

/** How many records took a token count from the server's `usage` and how many from the local tokenizer. */
export interface TokenSourceCounts {
  server: number;
  local: number;
}

/** Statistics of the per-request metrics, over completed non-warmup records (null when there is no value). */
export interface SummaryMetrics {
  /** Milliseconds; records with a first token. */
  ttft_ms: Stats | null;
  /**
   * Milliseconds to the first token of the answer itself (content, not reasoning); records with content. Equal to
   * ttft_ms unless the model reasons first.
   */
  ttft_content_ms: Stats | null;
  /** Milliseconds; records with more than one output token. */
  tpot_ms: Stats | null;
  /** Milliseconds; every inter-token gap of every record, pooled. */
  itl_ms: Stats | null;
  /** Milliseconds. */
  e2el_ms: Stats | null;
  /** Tokens. */
  input_num_tokens: Stats | null;
  output_num_tokens: Stats | null;
  /** Tokens; only records whose server reported cached tokens. */
  cached_tokens: Stats | null;
  expected_cached_tokens: Stats | null;
  /** Coordinated omission (records with a schedule only): send minus scheduled time, ms. */
  schedule_lag_ms: Stats | null;
  /** Time waiting for a --max-concurrency slot, ms (records with a schedule). */
  queue_ms: Stats | null;
  /** TTFT and E2EL measured from the scheduled send time, ms (records with a schedule). */
  ttft_from_scheduled_ms: Stats | null;
  e2el_from_scheduled_ms: Stats | null;
}

/** The per-request metrics every summary table shows, in display order (terminal, Excel). */
export const SUMMARY_METRIC_ROWS = [
  'ttft_ms',
  'tpot_ms',
  'itl_ms',
  'e2el_ms',
  'input_num_tokens',
  'output_num_tokens',
  'cached_tokens',
  'expected_cached_tokens',
] as const satisfies ReadonlyArray<keyof SummaryMetrics>;

/**
 * True when the answer's first token came later than the first token of some request: the model reasoned first, so
 * TTFT (first token of reasoning or content) and the time to the answer differ, and reports show both.
 */
export function answersAfterReasoning(metrics: { ttft_ms: Stats | null; ttft_content_ms?: Stats | null }): boolean {
  const all = metrics.ttft_ms;
  const content = metrics.ttft_content_ms;
  if (all === null || content === null || content === undefined) return false;
  return content.count !== all.count || content.mean !== all.mean || content.max !== all.max;
}

/** TTFT of the completed requests whose prompt falls in one context-length range. */
export interface ContextBucket {
  /** e.g. "1k-2k" (input tokens). */
  label: string;
  min_tokens: number;
  /** Exclusive upper bound; null for the last, open bucket. */
  max_tokens: number | null;
  count: number;
  ttft_ms: Stats | null;
}

/**
 * The summary of one run (or one slice of it). Warmup records are excluded throughout; "completed" means status 'ok'.
 * Token totals and metrics cover completed records; runtime covers completed and failed ones. See docs/METRICS.md.
 */
export interface Summary {
  /** Non-warmup records summarized (completed + failed). */
  requests: number;
  completed: number;
  failed: number;
  failed_by_kind: Record<ErrorKind, number>;
  /** Records left out as warmup (--warmup-step; in warmup-percentage summaries also the dropped first share). */
  warmup_excluded: number;
  /** failed / requests; 0 with no requests. */
  error_rate: number;
  /** First send to last end over the summarized records, seconds. 0 with no records. */
  runtime_sec: number;
  /** completed / runtime_sec (requests/s); the reference's requests_per_sec. 0 when runtime is 0. */
  request_throughput: number;
  /** Output tokens of completed requests / runtime_sec (tokens/s). */
  output_throughput: number;
  /** (input + output tokens of completed requests) / runtime_sec (tokens/s). */
  total_token_throughput: number;
  total_input_tokens: number;
  total_output_tokens: number;
  /** Sum of server-reported cached tokens (records where it is known). */
  total_cached_tokens: number;
  total_expected_cached_tokens: number;
  /** Completed records whose server reported cached tokens. */
  cached_tokens_known: number;
  /** total cached / total input over records whose cached tokens are known; null when none is known. */
  cache_hit_ratio: number | null;
  /** cached / expected cached over records with expected > 0 and cached known; null when there are none. */
  cache_efficiency: number | null;
  token_sources: { input: TokenSourceCounts; output: TokenSourceCounts };
  metrics: SummaryMetrics;
  /** TTFT by context length (input tokens): 0-1k, 1k-2k, 2k-4k, ... 32k+; only non-empty buckets. */
  ttft_by_context: ContextBucket[];
  /** Goodput under --goodput SLOs; null without SLOs. */
  goodput: Goodput | null;
  /**
   * Metrics (keys of `metrics`, e.g. "itl_ms", and "ttft_by_context") whose statistics came from a LatencyHistogram:
   * their percentiles are within 0.1% of the exact ones (count, mean, std, min, max stay exact). Empty when every
   * statistic is exact. Results files written before this field existed lack it.
   */
  approximate_metrics: string[];
}

/**
 * What a summary reads of a request record: a RequestRecord is one, and so is a row of a RecordLog (where `itl_ms` is
 * a view of a shared array).
 */
export type SummaryInput = Pick<
  RequestRecord,
  | 'turn'
  | 'status'
  | 'error_kind'
  | 'sent_at_ms'
  | 'done_at_ms'
  | 'ttft_ms'
  | 'ttft_content_ms'
  | 'tpot_ms'
  | 'e2el_ms'
  | 'input_num_tokens'
  | 'input_tokens_source'
  | 'output_num_tokens'
  | 'output_tokens_source'
  | 'cached_tokens'
  | 'expected_cached_tokens'
  | 'cache_model_input_tokens'
  | 'warm_start_tokens'
  | 'schedule_lag_ms'
  | 'queue_ms'
  | 'ttft_from_scheduled_ms'
  | 'e2el_from_scheduled_ms'
> & { itl_ms: ArrayLike<number> };
