import type { TurnSummary } from './per-turn.js';
import type { RunPrefixCache } from './prefix-cache-tally.js';
import type { Summary } from './summary.js';

/** One load point of a sweep: its value, where its run went, and its summaries. */
export interface SweepPoint {
  /** `concurrency` (clients), `session-rate` (sessions/s) or `think-time` (seconds idle between a session's turns). */
  kind: 'concurrency' | 'session-rate' | 'think-time';
  value: number;
  outputDir: string;
  summary: Summary;
  perTurn: TurnSummary[];
  /** Actual against expected cached tokens at this point (results.json `prefix_cache`). */
  prefixCache?: RunPrefixCache;
  /** With SLOs: whether goodput share reached the target. */
  meetsSlos: boolean | null;
  stopReason: string;
  /**
   * `sweep --repeat N`: the point ran N times into its folder's repeat-1 … repeat-N; `summary` and `perTurn` are
   * repetition 1's, `intervals` each key metric's mean and 95% interval across them (report/repeats.ts's shape).
   */
  repeats?: { runs: string[]; intervals: ReadonlyArray<{ key: string; unit: string; values: Array<number | null>; mean: number | null; ci95_half_width: number | null }> };
}
