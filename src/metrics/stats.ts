/**
 * Exact descriptive statistics, the columns of pandas' `describe()` plus p90/p99/p99.9. Values keep the unit of their
 * input (milliseconds for latencies, tokens for counts).
 */
export interface Stats {
  count: number;
  mean: number;
  /** Sample standard deviation (ddof = 1), as pandas' describe(); 0 when count is 1. */
  std: number;
  min: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
  p99: number;
  p99_9: number;
  max: number;
  /**
   * Further percentiles asked for (--metric-percentiles), keyed by the percentile as written ("95", "99.5"); present
   * only when some were asked for.
   */
  percentiles?: Record<string, number>;
}

/** The percentiles every Stats has (p25 ... p99_9). */
export const FIXED_PERCENTILES: readonly number[] = [25, 50, 75, 90, 99, 99.9];

/**
 * No extra percentiles: the one empty list every `extra` defaults to, told apart by identity before its length is
 * read. Why: V8 optimized `describe` during a run for the run's percentile list, and at the run's end each call with
 * an empty list (another hidden class) threw that code away and ran slowly: 51 deoptimizations in a 1,000-request
 * run (`--trace-deopt`), each 0.2-0.8 ms.
 */
export const NO_EXTRA_PERCENTILES: readonly number[] = [];

/** The numeric fields of a Stats (every key but the optional `percentiles` map). */
export type StatField = Exclude<keyof Stats, 'percentiles'>;

/** The key of percentile p in Stats.percentiles and in vllm's flat keys: 99 → "99", 99.9 → "99.9". */
export function percentileKey(p: number): string {
  return String(p);
}

/**
 * The p-th percentile (p in [0, 100]) of an ascending array, by linear interpolation between the two nearest ranks:
 * numpy's default method ("linear"), which pandas and vLLM use. NaN for an empty array.
 */
export function percentile(sorted: Float64Array, p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within [0, 100], got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, n - 1);
  const lower = sorted[lo]!;
  const upper = sorted[hi]!;
  const t = rank - lo;
  // numpy's _lerp: interpolate from the nearer end, which keeps results monotonic and exact at the ends.
  return t >= 0.5 ? upper - (upper - lower) * (1 - t) : lower + (upper - lower) * t;
}

/**
 * Sorts `values` ascending in place (as Float64Array's sort does, NaNs last) and returns it. Why not that sort alone:
 * non-negative doubles (latencies, token counts, times) order as their IEEE-754 bits read as unsigned 64-bit integers,
 * and V8 sorts a BigUint64Array about twice as fast as a Float64Array (a 1,000-request run's 127,000 ITL gaps:
 * ~6.5 against ~12.5 ms on Node 20), a sort each run's end does two or three times (issue 17). A negative value, -0 or
 * a negative NaN has its sign bit set and so sorts last as an integer: then the values are sorted again as doubles.
 */
export function sortAscending(values: Float64Array): Float64Array {
  if (values.length < 2) return values;
  new BigUint64Array(values.buffer, values.byteOffset, values.length).sort();
  const last = values[values.length - 1]!;
  if (!(last >= 0) || Object.is(last, -0)) values.sort();
  return values;
}

/** Statistics of `values` (copied and sorted; the input is not modified). Null when there are no values. */
export function describe(values: ArrayLike<number>, extra: readonly number[] = NO_EXTRA_PERCENTILES): Stats | null {
  // The copy is made before anything reads `values`: callers pass a Float64Array view (ValueSet) or a number[]
  // (per-conversation stats), and describe() is optimized (on-stack, in its first long loop) for the first it met.
  // Read through the builtin only, `values` is never checked against that hidden class, which deoptimized describe()
  // at the next caller's array ("wrong map", issue 17).
  const sorted = sortAscending(Float64Array.from(values));
  const n = sorted.length;
  if (n === 0) return null;
  const mean = meanOf(sorted);
  const squares = squaredDeviations(sorted, mean);
  const stats: Stats = {
    count: n,
    mean,
    std: n > 1 ? Math.sqrt(squares / (n - 1)) : 0,
    min: sorted[0]!,
    p25: percentile(sorted, 25),
    p50: percentile(sorted, 50),
    p75: percentile(sorted, 75),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    p99_9: percentile(sorted, 99.9),
    max: sorted[n - 1]!,
  };
  if (extra !== NO_EXTRA_PERCENTILES && extra.length > 0) stats.percentiles = Object.fromEntries(extra.map((p) => [percentileKey(p), percentile(sorted, p)]));
  return stats;
}

// The two passes over the sorted values are functions of their own: a run's end calls describe() a few dozen times,
// once over its ~127,000 ITL gaps (1,000 requests), and V8 compiled all of describe() two or three times for these
// loops (on-stack at the long array, then again), ~10-25 ms of optimizing-compiler work for code that runs once
// (issue 17; `--trace-opt`). Now only these small loops are compiled.

/** The mean of `values` (summed in order). */
function meanOf(values: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  return sum / values.length;
}

/** The sum of squared deviations from `mean`: the second of two passes, stable where the one-pass formula cancels catastrophically. */
function squaredDeviations(values: Float64Array, mean: number): number {
  let squares = 0;
  for (let i = 0; i < values.length; i++) {
    const d = values[i]! - mean;
    squares += d * d;
  }
  return squares;
}

/** Population standard deviation (ddof = 0, numpy's np.std, which `vllm bench serve` reports) from a Stats' sample std. */
export function populationStd(stats: Stats): number {
  return stats.count > 1 ? stats.std * Math.sqrt((stats.count - 1) / stats.count) : 0;
}
