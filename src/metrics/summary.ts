import type { ErrorKind } from '../client/types.js';
import { emptyErrorKindCounts } from './error-kinds.js';
import type { RequestRecord } from './record.js';
import { hasSlos, meetsSlos, type Goodput, type Slos } from './goodput.js';
import { LatencyHistogram, LatencyHistograms } from './histogram.js';
import { describe, type Stats } from './stats.js';

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

/** The summary metrics a StreamingSummary keeps in histograms of its own besides the latency ones (LatencyHistograms). */
const OTHER_METRICS = [
  'input_num_tokens',
  'output_num_tokens',
  'cached_tokens',
  'expected_cached_tokens',
  'schedule_lag_ms',
  'queue_ms',
  'ttft_from_scheduled_ms',
  'e2el_from_scheduled_ms',
] as const satisfies ReadonlyArray<keyof SummaryMetrics>;
type OtherMetric = (typeof OTHER_METRICS)[number];

/**
 * A Summary built one record at a time in memory bounded by histograms, not by the record count (a run's analysis or
 * `chatload merge` past their record limits). Every counter, total, ratio, throughput, runtime and goodput is exact;
 * every Stats and TTFT by context come from LatencyHistograms (token counts too: a histogram of values, whatever their
 * unit), so their percentiles are within 0.1% and their count, mean, std, min and max exact; approximate_metrics lists
 * them.
 */
export class StreamingSummary {
  #counters: SummaryCounters;
  #warmup = 0;
  #histograms: LatencyHistograms | null;
  #others = Object.fromEntries(OTHER_METRICS.map((m) => [m, new LatencyHistogram()])) as Record<OtherMetric, LatencyHistogram>;
  #byContext: LatencyHistogram[] = CONTEXT_EDGES.map(() => new LatencyHistogram());

  /**
   * `recordLatencies: false` leaves the latency histograms to the caller (summary() then takes them, e.g. merged
   * from shards' results.json); the other metrics and TTFT by context are always recorded here.
   */
  constructor(options: { slos?: Slos; recordLatencies?: boolean } = {}) {
    this.#counters = new SummaryCounters(options.slos);
    this.#histograms = options.recordLatencies === false ? null : new LatencyHistograms();
  }

  /** The latency histograms recorded here (completed non-warmup records); null with `recordLatencies: false`. */
  get histograms(): LatencyHistograms | null {
    return this.#histograms;
  }

  /** Adds one record: a warmup record only counts in warmup_excluded. */
  add(record: RequestRecord): void {
    if (record.warmup) {
      this.#warmup++;
      return;
    }
    this.#counters.add(record);
    if (record.status !== 'ok') return;
    this.#histograms?.add(record);
    if (record.ttft_ms !== null) this.#byContext[contextBucket(record.input_num_tokens)]!.record(record.ttft_ms);
    const o = this.#others;
    o.input_num_tokens.record(record.input_num_tokens);
    o.output_num_tokens.record(record.output_num_tokens);
    o.expected_cached_tokens.record(record.expected_cached_tokens);
    if (record.cached_tokens !== null) o.cached_tokens.record(record.cached_tokens);
    if (record.schedule_lag_ms !== null) {
      o.schedule_lag_ms.record(record.schedule_lag_ms);
      o.queue_ms.record(record.queue_ms);
      if (record.ttft_from_scheduled_ms !== null) o.ttft_from_scheduled_ms.record(record.ttft_from_scheduled_ms);
      if (record.e2el_from_scheduled_ms !== null) o.e2el_from_scheduled_ms.record(record.e2el_from_scheduled_ms);
    }
  }

  /** Counts a record as left out (warmup_excluded) without summarizing it: the dropped share of a warmup percentage. */
  addExcluded(): void {
    this.#warmup++;
  }

  /** The summary so far; `histograms` (completed non-warmup records only) replaces the latency ones recorded here. */
  summary(histograms?: LatencyHistograms): Summary {
    const h = histograms ?? this.#histograms;
    if (h === null) throw new Error('StreamingSummary.summary() needs histograms when constructed with recordLatencies: false');
    const byContext: ContextBucket[] = [];
    this.#byContext.forEach((histogram, b) => {
      if (histogram.count > 0) byContext.push({ ...contextRange(b), count: histogram.count, ttft_ms: histogram.stats() });
    });
    const others = Object.fromEntries(OTHER_METRICS.map((m) => [m, this.#others[m].stats()])) as Record<OtherMetric, Stats | null>;
    const metrics: SummaryMetrics = {
      ttft_ms: h.byMetric.ttft_ms.stats(),
      tpot_ms: h.byMetric.tpot_ms.stats(),
      itl_ms: h.byMetric.itl_ms.stats(),
      e2el_ms: h.byMetric.e2el_ms.stats(),
      ...others,
    };
    return this.#counters.summary(this.#warmup, {
      metrics,
      ttftByContext: byContext,
      approximateMetrics: [...Object.keys(metrics).filter((m) => metrics[m as keyof SummaryMetrics] !== null), 'ttft_by_context'],
    });
  }
}

/** The exact counters of a summary (no per-value arrays), added one non-warmup record at a time. */
class SummaryCounters {
  readonly #slos: Slos | undefined;
  #requests = 0;
  #failed = 0;
  #failedByKind = emptyErrorKindCounts();
  #inputSources: TokenSourceCounts = { server: 0, local: 0 };
  #outputSources: TokenSourceCounts = { server: 0, local: 0 };
  #firstSentMs = Infinity;
  #lastDoneMs = -Infinity;
  #totalInput = 0;
  #totalOutput = 0;
  #totalCached = 0;
  #totalExpected = 0;
  #cachedKnown = 0;
  #knownInput = 0;
  #efficiencyCached = 0;
  #efficiencyExpected = 0;
  #good = 0;

  constructor(slos: Slos | undefined) {
    this.#slos = hasSlos(slos) ? slos : undefined;
  }

  add(r: RequestRecord): void {
    this.#requests++;
    if (r.sent_at_ms < this.#firstSentMs) this.#firstSentMs = r.sent_at_ms;
    if (r.done_at_ms > this.#lastDoneMs) this.#lastDoneMs = r.done_at_ms;
    if (this.#slos !== undefined && meetsSlos(r, this.#slos)) this.#good++;
    if (r.status === 'error') {
      this.#failed++;
      this.#failedByKind[r.error_kind ?? 'other']++;
      return;
    }
    this.#inputSources[r.input_tokens_source]++;
    this.#outputSources[r.output_tokens_source]++;
    this.#totalInput += r.input_num_tokens;
    this.#totalOutput += r.output_num_tokens;
    this.#totalExpected += r.expected_cached_tokens;
    if (r.cached_tokens !== null) {
      this.#cachedKnown++;
      this.#totalCached += r.cached_tokens;
      this.#knownInput += r.input_num_tokens;
      if (r.expected_cached_tokens > 0) {
        this.#efficiencyCached += r.cached_tokens;
        this.#efficiencyExpected += r.expected_cached_tokens;
      }
    }
  }

  summary(warmupExcluded: number, parts: { metrics: SummaryMetrics; ttftByContext: ContextBucket[]; approximateMetrics: string[] }): Summary {
    const n = this.#requests;
    const completed = n - this.#failed;
    const runtimeSec = n > 0 ? Math.max(0, this.#lastDoneMs - this.#firstSentMs) / 1000 : 0;
    const perSec = (x: number): number => (runtimeSec > 0 ? x / runtimeSec : 0);
    return {
      requests: n,
      completed,
      failed: this.#failed,
      failed_by_kind: { ...this.#failedByKind },
      warmup_excluded: warmupExcluded,
      error_rate: n > 0 ? this.#failed / n : 0,
      runtime_sec: runtimeSec,
      request_throughput: perSec(completed),
      output_throughput: perSec(this.#totalOutput),
      total_token_throughput: perSec(this.#totalInput + this.#totalOutput),
      total_input_tokens: this.#totalInput,
      total_output_tokens: this.#totalOutput,
      total_cached_tokens: this.#totalCached,
      total_expected_cached_tokens: this.#totalExpected,
      cached_tokens_known: this.#cachedKnown,
      cache_hit_ratio: this.#cachedKnown > 0 && this.#knownInput > 0 ? this.#totalCached / this.#knownInput : null,
      cache_efficiency: this.#efficiencyExpected > 0 ? this.#efficiencyCached / this.#efficiencyExpected : null,
      token_sources: { input: { ...this.#inputSources }, output: { ...this.#outputSources } },
      metrics: parts.metrics,
      ttft_by_context: parts.ttftByContext,
      // As computeGoodput(): good requests over all summarized ones, and per second of runtime.
      goodput:
        this.#slos === undefined
          ? null
          : { slos: this.#slos, good_requests: this.#good, share: n > 0 ? this.#good / n : 0, request_goodput: perSec(this.#good) },
      approximate_metrics: parts.approximateMetrics,
    };
  }
}

/** Bucket edges in input tokens: powers of two from 1k to 32k. */
const CONTEXT_EDGES = [0, 1024, 2048, 4096, 8192, 16384, 32768];

function contextLabel(tokens: number): string {
  return tokens === 0 ? '0' : `${tokens / 1024}k`;
}

/** The index of the context bucket a prompt of `inputTokens` falls in. */
function contextBucket(inputTokens: number): number {
  let b = CONTEXT_EDGES.length - 1;
  while (inputTokens < CONTEXT_EDGES[b]!) b -= 1;
  return b;
}

/** A context bucket's label and bounds. */
function contextRange(b: number): Pick<ContextBucket, 'label' | 'min_tokens' | 'max_tokens'> {
  const min = CONTEXT_EDGES[b]!;
  const max = CONTEXT_EDGES[b + 1] ?? null;
  return { label: max === null ? `${contextLabel(min)}+` : `${contextLabel(min)}-${contextLabel(max)}`, min_tokens: min, max_tokens: max };
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
