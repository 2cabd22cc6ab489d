// Summaries of records held in memory (tests, the library API, small reports): the same SummaryBuilder and warmup cuts
// a RunAggregate uses, every statistic exact (the records are in memory anyway).
import type { Slos } from './goodput.js';
import type { RequestRecord } from './record.js';
import { RunAggregate } from './run-aggregate.js';
import { EXACT_ITL_LIMIT, SummaryBuilder } from './summary-builder.js';
import type { ContextBucket, Summary } from './summary-types.js';

export { EXACT_ITL_LIMIT } from './summary-builder.js';
export { answersAfterReasoning, SUMMARY_METRIC_ROWS, type ContextBucket, type Summary, type SummaryInput, type SummaryMetrics, type TokenSourceCounts } from './summary-types.js';

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

/** Summarizes records: warmup ones are counted in warmup_excluded and otherwise ignored. Exact (ITL up to exactLimit gaps). */
export function summarize(records: readonly RequestRecord[], options: SummaryOptions = {}): Summary {
  const builder = new SummaryBuilder({ slos: options.slos, exact: true, itlLimit: options.exactLimit ?? EXACT_ITL_LIMIT });
  let warmup = 0;
  for (const r of records) {
    if (r.warmup) warmup++;
    else builder.add(r);
  }
  return builder.summary(warmup);
}

/**
 * One summary per warmup percentage, keyed "0%", "50%", ...: each drops the first X% (floor of X% of the count) of the
 * non-warmup records ordered by start time, as the reference's --warmup-percentages does (ties in the records' order).
 * Percentages are in [0, 100) (else a RangeError). Like the reference, a percentage that would leave no record gets no
 * entry.
 */
export function summarizeWarmupPercentages(records: readonly RequestRecord[], percentages: readonly number[], options: SummaryOptions = {}): Record<string, Summary> {
  const aggregate = RunAggregate.fromRecords(records, { slos: options.slos, warmupPercentages: percentages, exactRecords: Number.POSITIVE_INFINITY, exactGaps: options.exactLimit });
  return aggregate.warmupPercentages(records);
}

/** TTFT grouped by the request's input tokens (completed non-warmup requests with a first token). */
export function ttftByContext(records: readonly RequestRecord[]): ContextBucket[] {
  return summarize(records).ttft_by_context;
}
