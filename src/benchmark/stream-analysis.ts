import { conversationStats, ConversationTally } from '../metrics/per-conversation.js';
import { PerTurnTally } from '../metrics/per-turn.js';
import { StreamingSummary } from '../metrics/streaming-summary.js';
import type { Summary } from '../metrics/summary.js';
import type { SummaryPlan } from '../options/run-plan.js';
import { countJsonlLines, readRequestsJsonl, streamRequestsJsonl } from '../report/requests-jsonl.js';
import { analyzeRecords, type RunAnalysis } from './analysis.js';

/**
 * Records up to which a run's analysis loads them all and every statistic is exact. Each costs ~1.2 KB of heap with
 * its inter-token gaps, and the exact statistics copy them again: 200,000 records peak at ~1 GB RSS here (bench/analysis-memory.ts).
 */
export const EXACT_ANALYSIS_RECORDS = 100_000;

/** A run's analysis from its requests.jsonl, and how it was made. */
export interface FileAnalysis extends RunAnalysis {
  /** 'exact': every record loaded. 'streaming': records streamed, Stats from histograms (percentiles within 0.1%). */
  mode: 'exact' | 'streaming';
  /** What the analysis could not do exactly, for results.json's warnings (empty in exact mode). */
  warnings: string[];
}

/**
 * Analyzes a requests.jsonl. Up to `exactRecords` lines it loads every record and everything is exact (analyzeRecords).
 * Above, memory stays bounded by histograms and by the number of conversations, not by the records: they are streamed,
 * every count, total, ratio, throughput, goodput and warmup-percentage cut is exact, and every Stats (summary, per
 * turn, warmup percentages) comes from LatencyHistograms, listed in summary.approximate_metrics.
 */
export async function analyzeRecordsFile(path: string, options: Pick<SummaryPlan, 'goodput' | 'warmupPercentages'>, limits: { exactRecords?: number } = {}): Promise<FileAnalysis> {
  const exactRecords = limits.exactRecords ?? EXACT_ANALYSIS_RECORDS;
  if ((await countJsonlLines(path)) <= exactRecords) return { ...analyzeRecords(readRequestsJsonl(path), options), mode: 'exact', warnings: [] };

  const slos = options.goodput ?? {};
  const cuts = await warmupCuts(path, options.warmupPercentages);
  const summary = new StreamingSummary({ slos });
  const perTurn = new PerTurnTally({ slos });
  const conversations = new ConversationTally();
  const cutSummaries = cuts.map((cut) => (cut.dropped === 0 ? summary : new StreamingSummary({ slos })));
  const count = await streamRequestsJsonl(path, (r) => {
    summary.add(r);
    perTurn.add(r);
    conversations.add(r);
    cuts.forEach((cut, i) => {
      const s = cutSummaries[i]!;
      if (s === summary) return;
      if (r.warmup) s.add(r);
      else if (cut.drops(r.sent_at_ms)) s.addExcluded();
      else s.add(r);
    });
  });
  const whole = summary.summary();
  const perConversation = conversations.summaries();
  const warmupPercentages: Record<string, Summary> = {};
  cuts.forEach((cut, i) => {
    warmupPercentages[`${cut.percent}%`] = cutSummaries[i] === summary ? whole : cutSummaries[i]!.summary();
  });
  return {
    summary: whole,
    warmupPercentages,
    perTurn: perTurn.summaries(),
    perConversation,
    conversationStats: conversationStats(perConversation),
    histograms: summary.histograms!.toJSON(),
    mode: 'streaming',
    warnings: [
      `${count} records exceed the ${exactRecords} a run's analysis holds in memory: they were streamed, so every statistic's percentiles (summary, per turn, warmup percentages) come from histograms, within 0.1% of the exact ones; counts, totals, ratios, throughputs, goodput, means, std, min and max are exact (summary.approximate_metrics)`,
    ],
  };
}

/** Which measured records one warmup percentage drops: the first floor(X% of n) by send time, ties in file order. */
interface WarmupCut {
  percent: number;
  dropped: number;
  /** Whether the next measured record (in file order), sent at `sentAtMs`, is dropped. Stateful: call once per record. */
  drops(sentAtMs: number): boolean;
}

/**
 * The cuts of the warmup percentages, as summarizeWarmupPercentages makes them on a stable sort by send time. One pass
 * collects the measured records' send times (8 bytes each) when a percentage above 0 needs them. A percentage that
 * would drop every record gets no cut (no entry), as there.
 */
async function warmupCuts(path: string, percentages: readonly number[]): Promise<WarmupCut[]> {
  const sorted = [...percentages].sort((a, b) => a - b);
  for (const p of sorted) if (!(p >= 0 && p < 100)) throw new RangeError(`warmup percentage must be within [0, 100), got ${p}`);
  if (!sorted.some((p) => p > 0)) return sorted.map((percent) => ({ percent, dropped: 0, drops: () => false }));
  let times = new Float64Array(1 << 16);
  let n = 0;
  await streamRequestsJsonl(path, (r) => {
    if (r.warmup) return;
    if (n === times.length) {
      const grown = new Float64Array(times.length * 2);
      grown.set(times);
      times = grown;
    }
    times[n++] = r.sent_at_ms;
  });
  const ordered = times.subarray(0, n).sort();
  const cuts: WarmupCut[] = [];
  for (const percent of sorted) {
    const dropped = Math.floor((percent / 100) * n);
    if (dropped >= n) continue;
    if (dropped === 0) {
      cuts.push({ percent, dropped, drops: () => false });
      continue;
    }
    // Records sent before the threshold are dropped; of those sent exactly at it, the first `ties` in file order.
    const threshold = ordered[dropped]!;
    let ties = dropped - lowerBound(ordered, threshold);
    cuts.push({
      percent,
      dropped,
      drops: (sentAtMs) => {
        if (sentAtMs < threshold) return true;
        if (sentAtMs === threshold && ties > 0) {
          ties--;
          return true;
        }
        return false;
      },
    });
  }
  return cuts;
}

/** The index of the first value >= x in an ascending array. */
function lowerBound(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
