import type { SweepPoint } from './sweep-point.js';

/** One point of the cache-pressure curve (`sweep --cache-pressure`). Ratios are cached / prompt tokens; times ms. */
export interface CachePressurePoint {
  /** Concurrent conversations (clients) or sessions/s. */
  value: number;
  /** What the server reported. */
  hit_ratio: number | null;
  /** The expected-cache model with no eviction, and with the KV capacity when one is known. */
  expected_hit_ratio_infinite: number | null;
  expected_hit_ratio: number | null;
  /** hit_ratio / expected_hit_ratio_infinite. */
  share_of_infinite: number | null;
  ttft_p50_ms: number | null;
  ttft_p99_ms: number | null;
  /** Mean tokens of a request's context (prompt + answer): a live conversation's size between its turns. */
  mean_context_tokens: number | null;
}

/** The knee of a cache-pressure curve. */
export interface CachePressureKnee {
  /** The share of the infinite-cache expectation the actual hit ratio must keep (e.g. 0.9). */
  share: number;
  /** The lowest load point whose actual hit ratio fell below share × the infinite expectation; null when none did. */
  knee: number | null;
  /** The highest point below the knee that held (every point when there is no knee); null when the first fell. */
  holds_up_to: number | null;
  /** The KV capacity the model used (tokens), when known, and capacity ÷ mean context tokens at the last holding point. */
  capacity_tokens: number | null;
  analytic_conversations: number | null;
}

/** The curve of a sweep's points, ascending by value. */
export function cachePressureCurve(points: readonly SweepPoint[]): CachePressurePoint[] {
  return [...points]
    .sort((a, b) => a.value - b.value)
    .map((p) => {
      const totals = p.prefixCache?.totals;
      const s = p.summary;
      const hit = s.cache_hit_ratio;
      const infinite = totals?.expected_hit_ratio_infinite ?? null;
      return {
        value: p.value,
        hit_ratio: hit,
        expected_hit_ratio_infinite: infinite,
        expected_hit_ratio: totals?.expected_hit_ratio ?? null,
        share_of_infinite: hit !== null && infinite !== null && infinite > 0 ? hit / infinite : null,
        ttft_p50_ms: s.metrics.ttft_ms?.p50 ?? null,
        ttft_p99_ms: s.metrics.ttft_ms?.p99 ?? null,
        mean_context_tokens: s.completed > 0 ? (s.total_input_tokens + s.total_output_tokens) / s.completed : null,
      };
    });
}

/**
 * The knee: the first point (ascending) whose actual hit ratio is below `share` of what an infinite cache would have
 * served, i.e. where the server's KV cache starts evicting live conversations. `capacityTokens` (the model's) gives
 * the analytic estimate beside it: capacity ÷ the mean context of a live conversation.
 */
export function cachePressureKnee(curve: readonly CachePressurePoint[], share: number, capacityTokens: number | null): CachePressureKnee {
  let knee: number | null = null;
  let holds: number | null = null;
  let meanContext: number | null = null;
  for (const p of curve) {
    if (p.share_of_infinite === null) continue;
    if (p.share_of_infinite < share) {
      knee = p.value;
      break;
    }
    holds = p.value;
    meanContext = p.mean_context_tokens;
  }
  meanContext ??= curve.find((p) => p.mean_context_tokens !== null)?.mean_context_tokens ?? null;
  const analytic = capacityTokens !== null && meanContext !== null && meanContext > 0 ? capacityTokens / meanContext : null;
  return { share, knee, holds_up_to: holds, capacity_tokens: capacityTokens, analytic_conversations: analytic };
}
