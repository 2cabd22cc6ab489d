// Metrics: per-request records and everything derived from them. Never touches the network.
export type { RequestRecord, TokenSource } from './record.js';
export { buildRecord, type RecordContext } from './build-record.js';
export { describe, percentile, populationStd, type Stats } from './stats.js';
export {
  EXACT_ITL_LIMIT,
  summarize,
  summarizeWarmupPercentages,
  ttftByContext,
  type ContextBucket,
  type SummaryOptions,
  type Summary,
  type SummaryInput,
  type SummaryMetrics,
  type TokenSourceCounts,
} from './summary.js';
export { SummaryBuilder, SUMMARY_METRICS, type SummaryBuilderOptions } from './summary-builder.js';
export {
  EXACT_ANALYSIS_RECORDS,
  RunAggregate,
  runAggregateOptions,
  type RecordReplay,
  type RunAggregateOptions,
  type SerializedRunAggregate,
} from './run-aggregate.js';
export { sumConversationCounts, type ConversationCounts } from './conversation-counts.js';
export {
  HISTOGRAM_METRICS,
  LatencyHistogram,
  LatencyHistograms,
  countsInHistograms,
  type HistogramMetric,
  type SerializedHistogram,
  type SerializedHistograms,
} from './histogram.js';
export { summarizePerTurn, TurnTable, type TurnSummary } from './per-turn.js';
export { summarizePerConversation, conversationStats, ConversationTally, type ConversationSummary, type ConversationStats } from './per-conversation.js';
export { parseSlos, meetsSlos, type Slos, type Goodput } from './goodput.js';
export {
  ClientHealthMonitor,
  assessClientHealth,
  DEFAULT_HEALTH_THRESHOLDS,
  type ClientHealth,
  type ClientHealthMeasurement,
  type ClientHealthMonitorOptions,
  type ClientHealthThresholds,
} from './client-health.js';
export { ERROR_KINDS, emptyErrorKindCounts } from './error-kinds.js';
export { roundMs } from './round.js';
