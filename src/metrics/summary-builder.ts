import { CONTEXT_EDGES, contextBucket, contextRange } from './context-buckets.js';
import { hasSlos, type Slos } from './goodput.js';
import type { HistogramMetric, LatencyHistogram } from './histogram.js';
import { NO_EXTRA_PERCENTILES, type Stats } from './stats.js';
import { SummaryCounters, type SerializedSummaryCounters } from './summary-counters.js';
import type { ContextBucket, Summary, SummaryInput, SummaryMetrics } from './summary-types.js';
import { ValueSet, type SerializedValueSet } from './value-set.js';

/**
 * Inter-token gaps (count) an exact summary pools in an array (8 bytes each: 16 MB) before it records them in a
 * LatencyHistogram instead: every gap of every record at scale would take hundreds of MB. See docs/METRICS.md.
 */
export const EXACT_ITL_LIMIT = 2_000_000;

/** Every metric of a summary, in the order `metrics` lists them (results.json's key order). */
export const SUMMARY_METRICS = [
  'ttft_ms',
  'ttft_content_ms',
  'tpot_ms',
  'itl_ms',
  'e2el_ms',
  'input_num_tokens',
  'output_num_tokens',
  'cached_tokens',
  'expected_cached_tokens',
  'schedule_lag_ms',
  'queue_ms',
  'ttft_from_scheduled_ms',
  'e2el_from_scheduled_ms',
] as const satisfies ReadonlyArray<keyof SummaryMetrics>;
type Metric = (typeof SUMMARY_METRICS)[number];

/** How a SummaryBuilder keeps its values. */
export interface SummaryBuilderOptions {
  /** --goodput objectives; without them the summary's `goodput` is null. */
  slos?: Slos;
  /**
   * true: exact arrays (every Stats exact, ITL up to `itlLimit` gaps, then a histogram). false: every Stats and TTFT by
   * context from histograms from the start (bounded memory whatever the count).
   */
  exact: boolean;
  /** @default EXACT_ITL_LIMIT */
  itlLimit?: number;
  /**
   * Latency histograms the caller records into itself (a RunAggregate's results.json histograms, which have the same
   * population): the builder does not record these metrics and takes their Stats from these histograms.
   */
  shared?: Partial<Record<HistogramMetric, LatencyHistogram>>;
  /** Further percentiles of the latency metrics (--metric-percentiles), in each Stats' `percentiles`. */
  percentiles?: readonly number[];
}

/** The metrics --metric-percentiles applies to (vllm's latency metrics, and the time to the answer). */
const LATENCY_METRICS: ReadonlySet<string> = new Set(['ttft_ms', 'ttft_content_ms', 'tpot_ms', 'itl_ms', 'e2el_ms']);

/** A histogram-mode SummaryBuilder as toJSON() writes it (shared metrics are left to their owner). */
export interface SerializedSummaryBuilder {
  counters: SerializedSummaryCounters;
  metrics: Partial<Record<Metric, SerializedValueSet>>;
  by_context: SerializedValueSet[];
}

/**
 * A Summary built one non-warmup record at a time: exact counters (SummaryCounters), and the values behind each Stats
 * (ValueSet: exact arrays, or histograms). Every summary chatload writes comes from one: the whole run, each warmup
 * percentage, a report's unfinished run. Warmup records are the caller's to leave out and count.
 */
export class SummaryBuilder {
  readonly #slos: Slos | undefined;
  readonly #exact: boolean;
  readonly #itlLimit: number;
  readonly #shared: ReadonlySet<Metric>;
  #counters: SummaryCounters;
  readonly #sets: Record<Metric, ValueSet>;
  readonly #byContext: ValueSet[];
  readonly #percentiles: readonly number[];

  constructor(options: SummaryBuilderOptions) {
    this.#percentiles = options.percentiles ?? [];
    this.#slos = hasSlos(options.slos) ? options.slos : undefined;
    this.#exact = options.exact;
    this.#itlLimit = options.itlLimit ?? EXACT_ITL_LIMIT;
    const shared = options.shared ?? {};
    this.#shared = new Set(Object.keys(shared) as Metric[]);
    this.#counters = new SummaryCounters(this.#slos);
    const own = (metric: Metric): ValueSet => {
      if (!this.#exact) return ValueSet.histogram();
      return ValueSet.exact(metric === 'itl_ms' ? this.#itlLimit : Number.POSITIVE_INFINITY);
    };
    this.#sets = Object.fromEntries(
      SUMMARY_METRICS.map((m) => {
        const histogram = shared[m as HistogramMetric];
        return [m, histogram === undefined ? own(m) : ValueSet.histogram(histogram)];
      }),
    ) as Record<Metric, ValueSet>;
    this.#byContext = CONTEXT_EDGES.map(() => (this.#exact ? ValueSet.exact() : ValueSet.histogram()));
  }

  /** Adds one non-warmup record. */
  add(r: SummaryInput): void {
    this.#counters.add(r);
    if (r.status === 'error') return;
    const s = this.#sets;
    const shared = this.#shared;
    if (r.ttft_ms !== null) {
      if (!shared.has('ttft_ms')) s.ttft_ms.add(r.ttft_ms);
      this.#byContext[contextBucket(r.input_num_tokens)]!.add(r.ttft_ms);
    }
    if (r.ttft_content_ms !== null) s.ttft_content_ms.add(r.ttft_content_ms);
    if (!shared.has('tpot_ms') && r.tpot_ms !== null) s.tpot_ms.add(r.tpot_ms);
    if (!shared.has('itl_ms')) s.itl_ms.addMany(r.itl_ms);
    if (!shared.has('e2el_ms')) s.e2el_ms.add(r.e2el_ms);
    s.input_num_tokens.add(r.input_num_tokens);
    s.output_num_tokens.add(r.output_num_tokens);
    s.expected_cached_tokens.add(r.expected_cached_tokens);
    if (r.cached_tokens !== null) s.cached_tokens.add(r.cached_tokens);
    if (r.schedule_lag_ms !== null) {
      s.schedule_lag_ms.add(r.schedule_lag_ms);
      s.queue_ms.add(r.queue_ms);
      if (r.ttft_from_scheduled_ms !== null) s.ttft_from_scheduled_ms.add(r.ttft_from_scheduled_ms);
      if (r.e2el_from_scheduled_ms !== null) s.e2el_from_scheduled_ms.add(r.e2el_from_scheduled_ms);
    }
  }

  /** Adds other's counts and values to these; shared metrics are left to their owner, who merges them. */
  merge(other: SummaryBuilder): this {
    this.#counters.merge(other.#counters);
    for (const m of SUMMARY_METRICS) if (!this.#shared.has(m)) this.#sets[m].merge(other.#sets[m]);
    this.#byContext.forEach((set, b) => set.merge(other.#byContext[b]!));
    return this;
  }

  /** The Summary of what was added; `warmupExcluded` is the caller's count of records left out. */
  summary(warmupExcluded: number): Summary {
    const metrics: SummaryMetrics = Object.fromEntries(SUMMARY_METRICS.map((m) => [m, this.#sets[m].stats(LATENCY_METRICS.has(m) ? this.#percentiles : NO_EXTRA_PERCENTILES)])) as Record<Metric, Stats | null>;
    const byContext: ContextBucket[] = [];
    this.#byContext.forEach((set, b) => {
      if (set.count > 0) byContext.push({ ...contextRange(b), count: set.count, ttft_ms: set.stats() });
    });
    const approximate: string[] = SUMMARY_METRICS.filter((m) => metrics[m] !== null && this.#sets[m].approximate);
    if (!this.#exact) approximate.push('ttft_by_context');
    return this.#counters.summary(warmupExcluded, { metrics, ttftByContext: byContext, approximateMetrics: approximate });
  }

  /** The builder as plain data, for a histogram-mode builder (an exact one would carry every value). */
  toJSON(): SerializedSummaryBuilder {
    if (this.#exact) throw new Error('SummaryBuilder.toJSON(): only a histogram-mode builder is serialized');
    const metrics: Partial<Record<Metric, SerializedValueSet>> = {};
    for (const m of SUMMARY_METRICS) if (!this.#shared.has(m)) metrics[m] = this.#sets[m].toJSON();
    return { counters: this.#counters.toJSON(), metrics, by_context: this.#byContext.map((set) => set.toJSON()) };
  }

  /** Restores a histogram-mode builder from toJSON()'s output, with the same `slos` and `shared` it was made with. */
  static fromJSON(value: SerializedSummaryBuilder, options: Omit<SummaryBuilderOptions, 'exact'>): SummaryBuilder {
    const out = new SummaryBuilder({ ...options, exact: false });
    out.#counters = SummaryCounters.fromJSON(value.counters, out.#slos);
    for (const m of SUMMARY_METRICS) {
      const set = value.metrics[m];
      if (!out.#shared.has(m) && set !== undefined) out.#sets[m] = ValueSet.fromJSON(set);
    }
    value.by_context.forEach((set, b) => {
      out.#byContext[b] = ValueSet.fromJSON(set);
    });
    return out;
  }
}
