import { LatencyHistogram, LatencyHistograms } from './histogram.js';
import type { Slos } from './goodput.js';
import type { RequestRecord } from './record.js';
import type { Stats } from './stats.js';
import type { ContextBucket, Summary, SummaryMetrics } from './summary.js';
import { CONTEXT_EDGES, contextBucket, contextRange, SummaryCounters } from './summary-parts.js';

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
