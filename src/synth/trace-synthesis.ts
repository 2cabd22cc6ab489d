import { Rng } from '../util/rng.js';

/*
 * `chatload trace synthesize` (docs/DATASETS.md, "Trace synthesis"): what a synthesis asks for, and the rounding every
 * format shares. The formats' writers: trace-synthesize-hash.ts (Mooncake, Bailian: hash ids, the prefix structure
 * kept or set) and trace-synthesize-csv.ts (Azure, BurstGPT: no prefix structure).
 */

/** What a synthesis changes. */
export interface TraceSynthesisOptions {
  /** --rate-scale: times from the trace's first request are divided by it. */
  rateScale: number;
  /** --isl-scale, --osl-scale: input and output lengths are multiplied by them. */
  islScale: number;
  oslScale: number;
  /** --prefix-share: the theoretical hit ratio (unbounded cache) the new hash ids make; undefined keeps the trace's. */
  prefixShare?: number;
  /** --seed: the rounding's draws. */
  seed: number;
}

/** What was written. */
export interface TraceSynthesisSummary {
  format: 'mooncake' | 'bailian' | 'azure' | 'burstgpt';
  /** Requests written (rows; for Mooncake and Bailian, rows with a request). */
  requests: number;
}

/**
 * `n` × `k` as a whole number, rounded up with the probability of its fraction (so the mean of many is `k` times
 * theirs, where plain rounding would bias short lengths); at least 1 unless `n` is 0 (a failed request stays one).
 */
export function scaleLength(n: number, k: number, rng: Rng): number {
  if (n === 0) return 0;
  if (k === 1) return n;
  const x = n * k;
  const whole = Math.floor(x);
  return Math.max(1, whole + (rng.next() < x - whole ? 1 : 0));
}

/** The seeded draws of a synthesis' rounding. */
export function synthesisRng(seed: number): Rng {
  return Rng.derive(seed, 36);
}
