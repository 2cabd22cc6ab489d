import { LatencyHistograms, type SerializedHistograms } from '../metrics/histogram.js';
import { conversationStats, summarizePerConversation, type ConversationStats, type ConversationSummary } from '../metrics/per-conversation.js';
import { summarizePerTurn, type TurnSummary } from '../metrics/per-turn.js';
import type { RequestRecord } from '../metrics/record.js';
import { summarize, summarizeWarmupPercentages, type Summary } from '../metrics/summary.js';
import type { SummaryPlan } from '../options/run-plan.js';

/** Everything derived from a run's records. */
export interface RunAnalysis {
  summary: Summary;
  warmupPercentages: Record<string, Summary>;
  perTurn: TurnSummary[];
  perConversation: ConversationSummary[];
  conversationStats: ConversationStats;
  /** TTFT, TPOT, ITL, E2EL of completed non-warmup records as LatencyHistograms, for results.json's `histograms`. */
  histograms: SerializedHistograms;
}

/** Summarizes the records (each summary leaves warmup records out itself, and counts them). */
export function analyzeRecords(records: readonly RequestRecord[], options: Pick<SummaryPlan, 'goodput' | 'warmupPercentages'>): RunAnalysis {
  const slos = options.goodput ?? {};
  const perConversation = summarizePerConversation(records);
  return {
    summary: summarize(records, { slos }),
    warmupPercentages: summarizeWarmupPercentages(records, options.warmupPercentages, { slos }),
    perTurn: summarizePerTurn(records, { slos }),
    perConversation,
    conversationStats: conversationStats(perConversation),
    histograms: LatencyHistograms.fromRecords(records).toJSON(),
  };
}

/** Schedule lag (p99, ms) above which the load was not what was asked for. */
export const SCHEDULE_LAG_WARN_MS = 10;

/**
 * The coordinated-omission warning, once per run: when requests went out late against their schedule, latency from
 * the actual send hides that wait, so say how late, and whether the concurrency cap or the client caused it.
 */
export function scheduleWarning(summary: Summary): string | undefined {
  const lag = summary.metrics.schedule_lag_ms;
  if (lag === null || lag.p99 <= SCHEDULE_LAG_WARN_MS) return undefined;
  const queue = summary.metrics.queue_ms;
  const fromScheduled = summary.metrics.e2el_from_scheduled_ms;
  const seen = fromScheduled ? `; E2EL from the scheduled time p99 ${fromScheduled.p99.toFixed(1)} ms against ${summary.metrics.e2el_ms?.p99.toFixed(1)} ms from the send` : '';
  if (queue !== null && queue.p99 > SCHEDULE_LAG_WARN_MS) {
    return `requests waited for --max-concurrency: schedule lag p99 ${lag.p99.toFixed(1)} ms, queue time p99 ${queue.p99.toFixed(1)} ms; the offered load was not delivered${seen}`;
  }
  return `requests went out late against their schedule (lag p99 ${lag.p99.toFixed(1)} ms) without waiting for a cap: the client or the server's pace distorted the load (see client health)${seen}`;
}
