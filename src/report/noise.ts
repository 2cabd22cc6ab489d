import type { Stats, StatField } from '../metrics/stats.js';
import { percentile } from '../metrics/stats.js';

/** z of a two-sided 95% interval. */
const Z95 = 1.96;

/**
 * The half-width of a 95% confidence interval of percentile `p` (0-100) from its sorted sample: the values at the
 * percentiles p ± z·√(q(1-q)/n), q = p/100 (the order-statistic interval). `effectiveN` is the count of independent
 * observations: the sample's length, or fewer when values come in correlated groups (ITL gaps: one group per request).
 */
export function percentileHalfWidth(sorted: Float64Array, p: number, effectiveN = sorted.length): number | null {
  if (sorted.length < 2 || effectiveN < 2) return null;
  const q = p / 100;
  const spread = Z95 * Math.sqrt((q * (1 - q)) / effectiveN);
  const lo = percentile(sorted, Math.max(0, q - spread) * 100);
  const hi = percentile(sorted, Math.min(1, q + spread) * 100);
  return (hi - lo) / 2;
}

/** The half-width of a 95% interval of a Stats field: the mean from its std, a percentile from the sample when given. */
export function statHalfWidth(stats: Stats | null | undefined, field: StatField, sorted: Float64Array | undefined, effectiveN?: number): number | null {
  if (stats === null || stats === undefined || stats.count < 2) return null;
  if (field === 'mean') return (Z95 * stats.std) / Math.sqrt(stats.count);
  if (sorted === undefined || sorted.length < 2) return null;
  const p = field === 'p99_9' ? 99.9 : Number(field.slice(1));
  return Number.isFinite(p) ? percentileHalfWidth(sorted, p, effectiveN) : null;
}

/** A rate from `n` events (requests/s, tokens/s): its Poisson 95% half-width, value · z / √n. */
export function rateHalfWidth(value: number | null, n: number): number | null {
  return value === null || n <= 0 ? null : (Z95 * value) / Math.sqrt(n);
}

/** A proportion over `n` trials (error rate, a hit ratio): its binomial 95% half-width. */
export function ratioHalfWidth(value: number | null, n: number): number | null {
  return value === null || n <= 0 ? null : Z95 * Math.sqrt((value * (1 - value)) / n);
}

/**
 * Whether a change from a to b is beyond the runs' own noise: |b - a| larger than the half-widths combined
 * (√(ha² + hb²)). Null when either run's noise is unknown.
 */
export function beyondNoise(a: number | null, b: number | null, ha: number | null, hb: number | null): boolean | null {
  if (a === null || b === null || ha === null || hb === null) return null;
  return Math.abs(b - a) > Math.sqrt(ha * ha + hb * hb);
}

/** The least band, as a share of the value: ties (a TPOT or ITL on a coarse clock) make an order-statistic interval zero wide. */
export const MIN_RELATIVE_BAND = 0.005;

/** A half-width held to at least MIN_RELATIVE_BAND of the value (null stays null: unknown). */
export function withFloor(halfWidth: number | null, value: number | null): number | null {
  if (halfWidth === null || value === null) return halfWidth;
  return Math.max(halfWidth, MIN_RELATIVE_BAND * Math.abs(value));
}
