import type { ErrorKind } from '../client/types.js';
import type { RequestRecord } from './record.js';
import type { Goodput, Slos } from './goodput.js';
import { LatencyHistogram } from './histogram.js';
import { describe, type Stats } from './stats.js';
import { CONTEXT_EDGES, contextBucket, contextRange, SummaryCounters } from './summary-parts.js';

/** What a summary needs beyond the records. */
export interface SummaryOptions {
  /** --goodput objectives; without them `goodput` is null. */
  slos?: Slos;
  /**
   * Inter-token gaps pooled exactly before the ITL statistics switch to a LatencyHistogram (percentiles within 0.1%).
   * @default EXACT_ITL_LIMIT
   */
  exactLimit?: number;
}

/**
 * Inter-token gaps (count) a summary pools in an exact array (8 bytes each: 16 MB) before it records them in a
 * LatencyHistogram instead: every gap of every record at scale would take hundreds of MB. See docs/METRICS.md.
 */
export const EXACT_ITL_LIMIT = 2_000_000;

/** How many records took a token count from the server's `usage` and how many from the local tokenizer. */
export interface TokenSourceCounts {
  server: number;
  local: number;
}

/** Statistics of the per-request metrics, over completed non-warmup records (null when there is no value). */
export interface SummaryMetrics {
  /** Milliseconds; records with a first token. */
  ttft_ms: Stats | null;
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
   * Metrics (keys of `metrics`, e.g. "itl_ms") whose statistics came from a LatencyHistogram: their percentiles are
   * within 0.1% of the exact ones (count, mean, std, min, max stay exact). Empty when every statistic is exact.
   * Results files written before this field existed lack it.
   */
  approximate_metrics: string[];
}

/** Summarizes records: warmup ones are counted in warmup_excluded and otherwise ignored. */
export function summarize(records: readonly RequestRecord[], options: SummaryOptions = {}): Summary {
  return summarizeSlice(
    records.filter((r) => !r.warmup),
    records.reduce((n, r) => n + (r.warmup ? 1 : 0), 0),
    options,
  );
}

/**
 * One summary per warmup percentage, keyed "0%", "50%", ...: each drops the first X% (floor of X% of the count) of the
 * non-warmup records ordered by start time, as the reference's --warmup-percentages does. Percentages are in [0, 100).
 * Like the reference, a percentage that would leave no record gets no entry.
 */
export function summarizeWarmupPercentages(
  records: readonly RequestRecord[],
  percentages: readonly number[],
  options: SummaryOptions = {},
): Record<string, Summary> {
  const warmupCount = records.reduce((n, r) => n + (r.warmup ? 1 : 0), 0);
  // Array.prototype.sort is stable, so records sent at the same instant keep their order.
  const ordered = records.filter((r) => !r.warmup).sort((a, b) => a.sent_at_ms - b.sent_at_ms);
  const out: Record<string, Summary> = {};
  for (const percent of [...percentages].sort((a, b) => a - b)) {
    if (!(percent >= 0 && percent < 100)) throw new RangeError(`warmup percentage must be within [0, 100), got ${percent}`);
    const dropped = Math.floor((percent / 100) * ordered.length);
    if (dropped >= ordered.length) continue;
    out[`${percent}%`] = summarizeSlice(ordered.slice(dropped), warmupCount + dropped, options);
  }
  return out;
}

/** Summarizes records that are all to be counted (none warmup). */
function summarizeSlice(records: readonly RequestRecord[], warmupExcluded: number, options: SummaryOptions): Summary {
  const counters = new SummaryCounters(options.slos);
  const ttft: number[] = [];
  const tpot: number[] = [];
  const itlLimit = options.exactLimit ?? EXACT_ITL_LIMIT;
  let itl: number[] = [];
  // Past itlLimit gaps, the pooled ones move into a histogram that records every further gap (bounded memory).
  let itlHistogram: LatencyHistogram | null = null;
  const e2el: number[] = [];
  const inputTokens: number[] = [];
  const outputTokens: number[] = [];
  const cached: number[] = [];
  const expected: number[] = [];
  const lag: number[] = [];
  const queue: number[] = [];
  const ttftScheduled: number[] = [];
  const e2elScheduled: number[] = [];

  for (const r of records) {
    counters.add(r);
    if (r.status === 'error') continue;
    if (r.ttft_ms !== null) ttft.push(r.ttft_ms);
    if (r.tpot_ms !== null) tpot.push(r.tpot_ms);
    for (const gap of r.itl_ms) {
      if (itlHistogram !== null) {
        itlHistogram.record(gap);
      } else if (itl.length < itlLimit) {
        itl.push(gap);
      } else {
        itlHistogram = new LatencyHistogram();
        itlHistogram.recordMany(itl);
        itlHistogram.record(gap);
        itl = [];
      }
    }
    e2el.push(r.e2el_ms);
    if (r.schedule_lag_ms !== null) {
      lag.push(r.schedule_lag_ms);
      queue.push(r.queue_ms);
      if (r.ttft_from_scheduled_ms !== null) ttftScheduled.push(r.ttft_from_scheduled_ms);
      if (r.e2el_from_scheduled_ms !== null) e2elScheduled.push(r.e2el_from_scheduled_ms);
    }
    inputTokens.push(r.input_num_tokens);
    outputTokens.push(r.output_num_tokens);
    expected.push(r.expected_cached_tokens);
    if (r.cached_tokens !== null) cached.push(r.cached_tokens);
  }

  return counters.summary(warmupExcluded, {
    metrics: {
      ttft_ms: describe(ttft),
      tpot_ms: describe(tpot),
      itl_ms: itlHistogram === null ? describe(itl) : itlHistogram.stats(),
      e2el_ms: describe(e2el),
      input_num_tokens: describe(inputTokens),
      output_num_tokens: describe(outputTokens),
      cached_tokens: describe(cached),
      expected_cached_tokens: describe(expected),
      schedule_lag_ms: describe(lag),
      queue_ms: describe(queue),
      ttft_from_scheduled_ms: describe(ttftScheduled),
      e2el_from_scheduled_ms: describe(e2elScheduled),
    },
    ttftByContext: ttftByContext(records),
    approximateMetrics: itlHistogram === null ? [] : ['itl_ms'],
  });
}

/** TTFT grouped by the request's input tokens (completed requests with a first token). */
export function ttftByContext(records: readonly RequestRecord[]): ContextBucket[] {
  const groups: number[][] = CONTEXT_EDGES.map(() => []);
  for (const r of records) {
    if (r.status !== 'ok' || r.ttft_ms === null) continue;
    groups[contextBucket(r.input_num_tokens)]!.push(r.ttft_ms);
  }
  const out: ContextBucket[] = [];
  groups.forEach((values, b) => {
    if (values.length === 0) return;
    out.push({ ...contextRange(b), count: values.length, ttft_ms: describe(values) });
  });
  return out;
}
