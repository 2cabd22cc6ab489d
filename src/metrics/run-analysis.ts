import type { AgenticSummary } from './agentic-tally.js';
import type { SerializedHistograms } from './histogram.js';
import type { Peaks } from './peak-bins.js';
import type { ConversationStats, ConversationSummary } from './per-conversation.js';
import type { TurnSummary } from './per-turn.js';
import type { PrefixCacheSummary } from './prefix-cache-tally.js';
import type { RequestRecord } from './record.js';
import type { ReplicaRow, RoutingLoss } from './replica-tally.js';
import { RunAggregate, runAggregateOptions, type RecordReplay } from './run-aggregate.js';
import type { Summary } from './summary.js';
import type { SummaryPlan } from '../options/run-plan.js';

/** Everything results.json holds about a run's records, from its RunAggregate. */
export interface RunAnalysis {
  summary: Summary;
  warmupPercentages: Record<string, Summary>;
  perTurn: TurnSummary[];
  /** Actual against expected cached tokens per turn and in all (issue #13). */
  prefixCache: PrefixCacheSummary;
  perConversation: ConversationSummary[];
  conversationStats: ConversationStats;
  /** TTFT, TPOT, ITL, E2EL of completed non-warmup records as LatencyHistograms, for results.json's `histograms`. */
  histograms: SerializedHistograms;
  /** `vllm bench serve`'s max_output_tokens_per_s and max_concurrent_requests (per-second bins, non-warmup records). */
  peaks: Peaks;
  /** Tool calls, their time, divergences from the dataset and sub-agent requests (results.json `agentic`); null when none. */
  agentic: AgenticSummary | null;
  /** One row per replica a response header named (results.json `replicas`); empty when none did. */
  replicas: ReplicaRow[];
  /** The one ideal cache against one cache per replica (results.json `prefix_cache.routing`); null without replicas. */
  routing: RoutingLoss | null;
  /** 'exact': every statistic exact. 'histogram': past the aggregate's exact limit, Stats from histograms (within 0.1%). */
  mode: 'exact' | 'histogram';
  /** What the analysis could not do exactly, for results.json's warnings (empty when exact). */
  warnings: string[];
}

/**
 * A run's analysis from its aggregate. `replay` gives the records again (e.g. streams requests.jsonl); it is called only
 * when warmup percentages above 0 are asked for past the aggregate's exact limits (RunAggregate.warmupPercentagesFrom).
 */
export async function analyzeAggregate(aggregate: RunAggregate, replay?: RecordReplay): Promise<RunAnalysis> {
  let warmupPercentages: Record<string, Summary>;
  if (aggregate.warmupPercentagesNeedRecords) {
    if (replay === undefined) throw new Error('analyzeAggregate(): these warmup percentages need the records again (a replay)');
    warmupPercentages = await aggregate.warmupPercentagesFrom(replay);
  } else {
    warmupPercentages = aggregate.warmupPercentages();
  }
  return assemble(aggregate, warmupPercentages);
}

/** The analysis of records in memory, every statistic exact (each summary leaves warmup records out, and counts them). */
export function analyzeRecords(records: readonly RequestRecord[], options: Pick<SummaryPlan, 'goodput' | 'warmupPercentages'> & Partial<Pick<SummaryPlan, 'metricPercentiles'>>): RunAnalysis {
  const aggregate = RunAggregate.fromRecords(records, { ...runAggregateOptions(options), exactRecords: Number.POSITIVE_INFINITY });
  return assemble(aggregate, aggregate.warmupPercentages(records));
}

function assemble(aggregate: RunAggregate, warmupPercentages: Record<string, Summary>): RunAnalysis {
  const perConversation = aggregate.perConversation();
  return {
    summary: aggregate.summary(),
    warmupPercentages,
    perTurn: aggregate.perTurn(),
    prefixCache: aggregate.prefixCache(),
    perConversation,
    conversationStats: aggregate.conversationStats(),
    histograms: aggregate.histograms.toJSON(),
    peaks: aggregate.peaks(),
    agentic: aggregate.agentic(),
    replicas: aggregate.replicas(),
    routing: aggregate.routing(),
    mode: aggregate.exact ? 'exact' : 'histogram',
    warnings: aggregate.exact
      ? []
      : [
          `${aggregate.records} records exceed the ${aggregate.exactRecords} a run's analysis keeps exactly: every statistic's percentiles (summary, per turn, warmup percentages) come from histograms, within 0.1% of the exact ones; counts, totals, ratios, throughputs, goodput, means, std, min and max are exact (summary.approximate_metrics)`,
        ],
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
  // Says what it measured, the lag: whether the client caused it is client health's to say (issue #34: this read
  // "the client or the server's pace distorted the load" beside "the client kept up").
  return `requests went out late against their schedule (lag p99 ${lag.p99.toFixed(1)} ms) without waiting for a cap, so the offered load was lower than asked: a slow answer holds back a closed-loop client's next request, and a busy client holds back every send (client health says whether the client was busy)${seen}`;
}
