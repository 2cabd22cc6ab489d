import type { TurnSummary } from './per-turn.js';
import type { RunPrefixCache } from './prefix-cache-tally.js';
import type { Summary } from './summary.js';

/** One load point of a sweep: its value, where its run went, and its summaries. */
export interface SweepPoint {
  /** `concurrency` (clients) or `session-rate` (sessions/s). */
  kind: 'concurrency' | 'session-rate';
  value: number;
  outputDir: string;
  summary: Summary;
  perTurn: TurnSummary[];
  /** Actual against expected cached tokens at this point (results.json `prefix_cache`). */
  prefixCache?: RunPrefixCache;
  /** With SLOs: whether goodput share reached the target. */
  meetsSlos: boolean | null;
  stopReason: string;
}
