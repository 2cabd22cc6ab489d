import type { RequestRecord } from '../metrics/record.js';
import { percentile, sortAscending } from '../metrics/stats.js';

/** One point of an empirical CDF: `value` (the metric's unit) at cumulative fraction `fraction` in [0, 1]. */
export interface CdfPoint {
  value: number;
  fraction: number;
}

/** Points per CDF curve: enough for a smooth line, few enough that a million ITL gaps cost a few KB of SVG. */
export const CDF_POINTS = 201;

/**
 * An empirical CDF of `values` sampled at CDF_POINTS evenly spaced fractions (exact percentiles, numpy's linear
 * method). Empty for no values.
 */
export function cdfPoints(values: ArrayLike<number>, points = CDF_POINTS): CdfPoint[] {
  return cdfOfSorted(sortAscending(Float64Array.from(values)), points);
}

/** cdfPoints of values already sorted ascending: a report sorts each sample once for its CDF and its nines. */
export function cdfOfSorted(sorted: Float64Array, points = CDF_POINTS): CdfPoint[] {
  if (sorted.length === 0) return [];
  const out: CdfPoint[] = [];
  for (let i = 0; i < points; i++) {
    const fraction = points === 1 ? 1 : i / (points - 1);
    out.push({ value: percentile(sorted, fraction * 100), fraction });
  }
  return out;
}

/** Points per percentile ("nines") curve. */
export const NINES_POINTS = 120;

/**
 * The value, in `sorted` (ascending), at percentiles from p50 up to the highest its count supports (n values support
 * 1 - 1/n: p99 needs 100, p99.9 needs 1,000), spaced evenly on the nines axis: x = -log10(1 - p/100). Empty for fewer
 * than 2 values.
 */
export function ninesOfSorted(sorted: Float64Array, points = NINES_POINTS): Array<{ x: number; value: number }> {
  if (sorted.length < 2) return [];
  const lo = Math.log10(2);
  const hi = Math.log10(sorted.length);
  const out: Array<{ x: number; value: number }> = [];
  for (let i = 0; i < points; i++) {
    const x = lo + ((hi - lo) * i) / (points - 1);
    out.push({ x, value: percentile(sorted, 100 * (1 - 10 ** -x)) });
  }
  return out;
}

/** The values of an ascending array above 0 (a view, no copy): what a log axis can show. */
export function positiveOf(sorted: Float64Array): Float64Array {
  let first = 0;
  while (first < sorted.length && !(sorted[first]! > 0)) first++;
  return sorted.subarray(first);
}

/** The latency samples of the distributions, over completed non-warmup records (milliseconds), each sorted ascending. */
export interface LatencySamples {
  ttft_ms: Float64Array;
  tpot_ms: Float64Array;
  itl_ms: Float64Array;
  e2el_ms: Float64Array;
}

/**
 * TTFT, TPOT, ITL (every gap) and E2EL of completed non-warmup records, as summarize() takes them. Filled in place
 * (ITL alone holds every gap of the run, ~128,000 at 1,000 requests) and sorted once for every chart and table.
 */
export function sortedLatencySamples(records: readonly RequestRecord[]): LatencySamples {
  let completed = 0;
  let gaps = 0;
  for (const r of records) {
    if (r.warmup || r.status !== 'ok') continue;
    completed++;
    gaps += r.itl_ms.length;
  }
  const out = { ttft_ms: new Float64Array(completed), tpot_ms: new Float64Array(completed), itl_ms: new Float64Array(gaps), e2el_ms: new Float64Array(completed) };
  let ttft = 0;
  let tpot = 0;
  let itl = 0;
  let e2el = 0;
  for (const r of records) {
    if (r.warmup || r.status !== 'ok') continue;
    if (r.ttft_ms !== null) out.ttft_ms[ttft++] = r.ttft_ms;
    if (r.tpot_ms !== null) out.tpot_ms[tpot++] = r.tpot_ms;
    // One native copy per record: a loop over ~128 gaps a record runs interpreted, before V8 compiles it, in a report.
    out.itl_ms.set(r.itl_ms, itl);
    itl += r.itl_ms.length;
    out.e2el_ms[e2el++] = r.e2el_ms;
  }
  return {
    ttft_ms: sortAscending(out.ttft_ms.subarray(0, ttft)),
    tpot_ms: sortAscending(out.tpot_ms.subarray(0, tpot)),
    itl_ms: sortAscending(out.itl_ms),
    e2el_ms: sortAscending(out.e2el_ms),
  };
}

/** One time bin of a run: start of the bin in seconds since the run's start, and what happened in it. */
export interface TimeBin {
  /** Bin start, seconds since the run's start (the monotonic `*_at_ms` clock). */
  t_sec: number;
  /** Completed requests that ended in the bin, per second. */
  request_rate: number;
  /** Output tokens of completed requests that ended in the bin, per second. */
  output_token_rate: number;
  /** Time-averaged number of requests in flight during the bin. */
  in_flight_mean: number;
  /** Most requests in flight at once during the bin. */
  in_flight_max: number;
  /** TTFT p50 / p90 of requests sent in the bin (ms); null when none had a TTFT. */
  ttft_p50_ms: number | null;
  ttft_p90_ms: number | null;
  /** Σ cached / Σ input of completed requests sent in the bin whose cached tokens are known; null when none. */
  cache_hit_ratio: number | null;
  /** Failed requests that ended in the bin, by error kind. */
  errors: Record<string, number>;
}

/**
 * One point of the rolling-window series: what happened in the trailing window ending at `t_sec` (seconds since the
 * run's start), with a time bin's figures but its errors. Smoother than single bins, which at a fraction of a second
 * look like sawtooth noise (issue 18).
 */
export type RollingPoint = Omit<TimeBin, 'errors'>;

/** Time bins of a run, and the width chosen. */
export interface TimeSeries {
  /** Width of one bin, seconds. */
  bin_sec: number;
  bins: TimeBin[];
  /** Width of the rolling window (seconds): span / 10 held to 1-5 s, a whole number of bins (at least one). */
  window_sec: number;
  /** One point per bin, over the trailing window_sec. */
  rolling: RollingPoint[];
  /** Per-request TTFT points (x: send time in s, y: ms), only when there are at most MAX_TTFT_DOTS of them. */
  ttft_points: Array<{ t_sec: number; ttft_ms: number }>;
}

/** Target number of bins over a run; the bin width is rounded to a "nice" step (1, 2, 5 × 10^k seconds). */
const TARGET_BINS = 150;
/** The rolling window's bounds (seconds) and its share of the run's span. */
const MIN_WINDOW_SEC = 1;
const MAX_WINDOW_SEC = 5;
const WINDOW_SHARE = 1 / 10;
/** Above this many requests the TTFT-over-time chart shows only per-bin percentiles (an SVG dot each would be heavy). */
export const MAX_TTFT_DOTS = 4000;

/** The nice bin width (seconds) for a span of `spanSec`: the 1-2-5 step at or above spanSec / TARGET_BINS, at least 1 ms. */
export function niceBinSec(spanSec: number, targetBins = TARGET_BINS): number {
  const raw = Math.max(spanSec / targetBins, 0.001);
  const exp = Math.floor(Math.log10(raw));
  for (const step of [1, 2, 5, 10]) {
    const width = step * 10 ** exp;
    if (width >= raw - 1e-12) return Number(width.toPrecision(6));
  }
  return 10 ** (exp + 1);
}

/** How timeSeries treats its records. */
export interface TimeSeriesOptions {
  /**
   * Run records each record stands for: 1 when the records are all of the run's; recordsTotal / sample size when they
   * are a uniform sample (RunData.sampled). Counts, rates, in-flight levels and error counts are multiplied by it
   * (estimates of the whole run's); TTFT percentiles and cache hit ratios are not (a sample estimates them as is).
   * @default 1
   */
  scale?: number;
}

/**
 * Bins the non-warmup records over the run's monotonic clock (sent_at_ms / done_at_ms, ms since the run's start).
 * Rates count what ended in a bin; TTFT and cache hit use the send time; in-flight is an exact sweep over send/end
 * events, time-averaged per bin. For a sample, `options.scale` turns the counts into estimates of the run's.
 */
export function timeSeries(records: readonly RequestRecord[], options: TimeSeriesOptions = {}): TimeSeries {
  const scale = options.scale ?? 1;
  const rs = records.filter((r) => !r.warmup);
  if (rs.length === 0) return { bin_sec: 1, bins: [], window_sec: 1, rolling: [], ttft_points: [] };
  const grid = binGrid(rs);
  const totals = binRecords(rs, grid);
  const { mean: inFlightMean, max: inFlightMax } = sweepInFlight(totals.events, grid.originMs, grid.binMs, grid.count);
  const binned: BinnedRun = { ...grid, ...totals, inFlightMean, inFlightMax, ttftOfBins: ttftOfBinRanges(totals.ttftByBin) };
  const windowBins = rollingWindowBins(grid);
  return {
    bin_sec: grid.binSec,
    bins: timeBins(binned, scale),
    window_sec: Number((windowBins * grid.binSec).toPrecision(6)),
    rolling: rollingPoints(binned, windowBins, scale),
    ttft_points: ttftDots(rs),
  };
}

/** Where a run's time bins lie on its clock: the first bin's start, the run's end (ms), the bins' width and count. */
interface BinGrid {
  originMs: number;
  endMs: number;
  binSec: number;
  binMs: number;
  count: number;
}

/** The bin grid over non-warmup records `rs` (at least one): a nice width, enough bins to reach the last event. */
function binGrid(rs: readonly RequestRecord[]): BinGrid {
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const r of rs) {
    startMs = Math.min(startMs, r.sent_at_ms);
    endMs = Math.max(endMs, r.done_at_ms, r.sent_at_ms);
  }
  // Bins start at the run's clock zero when the first send is near it, so times read as "seconds into the run".
  const originMs = Math.min(0, startMs);
  const binSec = niceBinSec((endMs - originMs) / 1000);
  const binMs = binSec * 1000;
  const count = Math.max(1, Math.ceil((endMs - originMs) / binMs + 1e-9));
  return { originMs, endMs, binSec, binMs, count };
}

/** The bin holding time `ms` (times outside the grid go to its first or last bin). */
function binIndex(grid: BinGrid, ms: number): number {
  return Math.min(grid.count - 1, Math.max(0, Math.floor((ms - grid.originMs) / grid.binMs)));
}

/** The time (seconds) bin `i` covers, which rates divide by. */
function binWidthSec(grid: BinGrid, i: number): number {
  const { binSec, binMs, originMs, endMs, count } = grid;
  // The last bin usually ends at the run's end, not at a full width: rates divide by the time it covers (at least a
  // quarter bin, so one request ending just past a boundary does not show as a spike).
  return i < count - 1 ? binSec : Math.min(binSec, Math.max(binSec / 4, (endMs - (originMs + i * binMs)) / 1000));
}

/** What the records put in each bin (unscaled), and their send (+1) / end (-1) events for the in-flight sweep. */
interface BinTotals {
  /** Completed requests and their output tokens, by end bin. */
  completed: number[];
  outputTokens: number[];
  /** TTFTs of completed requests, by send bin. */
  ttftByBin: number[][];
  /** Cached and input tokens (and how many requests report them) of completed requests, by send bin. */
  cached: number[];
  cachedInput: number[];
  cachedKnown: number[];
  /** Failed requests by error kind, by end bin. */
  errors: Array<Record<string, number>>;
  events: Array<[number, number]>;
}

/** Adds each record to its bins: completions, tokens and errors where it ended; TTFT and cache where it was sent. */
function binRecords(rs: readonly RequestRecord[], grid: BinGrid): BinTotals {
  const { count } = grid;
  const completed = new Array<number>(count).fill(0);
  const outputTokens = new Array<number>(count).fill(0);
  const ttftByBin: number[][] = Array.from({ length: count }, () => []);
  const cached = new Array<number>(count).fill(0);
  const cachedInput = new Array<number>(count).fill(0);
  const cachedKnown = new Array<number>(count).fill(0);
  const errors: Array<Record<string, number>> = Array.from({ length: count }, () => ({}));
  const events: Array<[number, number]> = [];
  for (const r of rs) {
    const end = binIndex(grid, r.done_at_ms);
    const sent = binIndex(grid, r.sent_at_ms);
    events.push([r.sent_at_ms, 1], [Math.max(r.done_at_ms, r.sent_at_ms), -1]);
    if (r.status === 'error') {
      const kind = r.error_kind ?? 'other';
      errors[end]![kind] = (errors[end]![kind] ?? 0) + 1;
      continue;
    }
    completed[end]!++;
    outputTokens[end]! += r.output_num_tokens;
    if (r.ttft_ms !== null) ttftByBin[sent]!.push(r.ttft_ms);
    if (r.cached_tokens !== null) {
      cached[sent]! += r.cached_tokens;
      cachedInput[sent]! += r.input_num_tokens;
      cachedKnown[sent]!++;
    }
  }
  return { completed, outputTokens, ttftByBin, cached, cachedInput, cachedKnown, errors, events };
}

/** A function giving the TTFTs of the requests sent in bins [from, to), sorted ascending. */
function ttftOfBinRanges(ttftByBin: readonly number[][]): (from: number, to: number) => Float64Array {
  const count = ttftByBin.length;
  // The TTFTs laid end to end by send bin (bin i's at [ttftStart[i], ttftStart[i + 1])): a trailing window's are then
  // one slice, copied and sorted natively, not gathered value by value for each of the ~150 windows.
  const ttftStart = new Int32Array(count + 1);
  for (let i = 0; i < count; i++) ttftStart[i + 1] = ttftStart[i]! + ttftByBin[i]!.length;
  const ttftFlat = new Float64Array(ttftStart[count]!);
  for (let i = 0; i < count; i++) ttftFlat.set(ttftByBin[i]!, ttftStart[i]!);
  return (from, to) => sortAscending(ttftFlat.slice(ttftStart[from]!, ttftStart[to]!));
}

/** Everything the bins and the rolling window are computed from: the grid, the bin totals, the in-flight sweep. */
interface BinnedRun extends BinGrid, BinTotals {
  /** Time-averaged and peak requests in flight, by bin (unscaled). */
  inFlightMean: number[];
  inFlightMax: number[];
  /** The TTFTs of the requests sent in bins [from, to), sorted ascending. */
  ttftOfBins: (from: number, to: number) => Float64Array;
}

/** One TimeBin per bin: counts as rates over the time the bin covers, scaled by `scale`. */
function timeBins(run: BinnedRun, scale: number): TimeBin[] {
  const { count, binSec, binMs, originMs, completed, outputTokens, inFlightMean, inFlightMax, cached, cachedInput, cachedKnown, errors } = run;
  const bins: TimeBin[] = [];
  for (let i = 0; i < count; i++) {
    const width = binWidthSec(run, i);
    const ttft = run.ttftOfBins(i, i + 1);
    bins.push({
      t_sec: Number(((i * binMs + originMs) / 1000).toFixed(6)),
      request_rate: (completed[i]! * scale) / width,
      output_token_rate: (outputTokens[i]! * scale) / width,
      in_flight_mean: (inFlightMean[i]! * binSec * scale) / width,
      in_flight_max: inFlightMax[i]! * scale,
      ttft_p50_ms: ttft.length > 0 ? percentile(ttft, 50) : null,
      ttft_p90_ms: ttft.length > 0 ? percentile(ttft, 90) : null,
      cache_hit_ratio: cachedKnown[i]! > 0 && cachedInput[i]! > 0 ? cached[i]! / cachedInput[i]! : null,
      errors: scale === 1 ? errors[i]! : Object.fromEntries(Object.entries(errors[i]!).map(([kind, n]) => [kind, n * scale])),
    });
  }
  return bins;
}

/** Bins in the rolling window: span × WINDOW_SHARE held to [MIN_WINDOW_SEC, MAX_WINDOW_SEC], at least one bin. */
function rollingWindowBins(grid: BinGrid): number {
  const { endMs, originMs, binSec } = grid;
  return Math.max(1, Math.round(Math.min(MAX_WINDOW_SEC, Math.max(MIN_WINDOW_SEC, ((endMs - originMs) / 1000) * WINDOW_SHARE)) / binSec));
}

/** One RollingPoint per bin: the figures of the trailing `windowBins` bins ending with it, scaled by `scale`. */
function rollingPoints(run: BinnedRun, windowBins: number, scale: number): RollingPoint[] {
  const { count, binSec, binMs, originMs, completed, outputTokens, inFlightMean, inFlightMax, cached, cachedInput } = run;
  const rolling: RollingPoint[] = [];
  for (let i = 0; i < count; i++) {
    let width = 0;
    let done = 0;
    let tokens = 0;
    let area = 0;
    let peak = 0;
    let hit = 0;
    let hitInput = 0;
    const first = Math.max(0, i - windowBins + 1);
    for (let j = first; j <= i; j++) {
      width += binWidthSec(run, j);
      done += completed[j]!;
      tokens += outputTokens[j]!;
      area += inFlightMean[j]! * binSec;
      peak = Math.max(peak, inFlightMax[j]!);
      hit += cached[j]!;
      hitInput += cachedInput[j]!;
    }
    const sorted = run.ttftOfBins(first, i + 1);
    rolling.push({
      t_sec: Number(((originMs + i * binMs) / 1000 + binWidthSec(run, i)).toFixed(6)),
      request_rate: (done * scale) / width,
      output_token_rate: (tokens * scale) / width,
      in_flight_mean: (area * scale) / width,
      in_flight_max: peak * scale,
      ttft_p50_ms: sorted.length > 0 ? percentile(sorted, 50) : null,
      ttft_p90_ms: sorted.length > 0 ? percentile(sorted, 90) : null,
      cache_hit_ratio: hitInput > 0 ? hit / hitInput : null,
    });
  }
  return rolling;
}

/** Each completed request's TTFT at its send time, when there are at most MAX_TTFT_DOTS records (else none). */
function ttftDots(rs: readonly RequestRecord[]): TimeSeries['ttft_points'] {
  const ttftPoints: TimeSeries['ttft_points'] = [];
  if (rs.length <= MAX_TTFT_DOTS) {
    for (const r of rs) if (r.status === 'ok' && r.ttft_ms !== null) ttftPoints.push({ t_sec: r.sent_at_ms / 1000, ttft_ms: r.ttft_ms });
  }
  return ttftPoints;
}

/** Time-weighted mean and max of the in-flight count per bin, from +1 (send) / -1 (end) events. */
function sweepInFlight(
  events: Array<[number, number]>,
  originMs: number,
  binMs: number,
  count: number,
): { mean: number[]; max: number[] } {
  // Ends sort before sends at the same instant, so a back-to-back closed loop does not count two in flight.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const area = new Array<number>(count).fill(0);
  const max = new Array<number>(count).fill(0);
  let level = 0;
  let prevMs = originMs;
  const addSpan = (fromMs: number, toMs: number, value: number): void => {
    let t = fromMs;
    while (t < toMs) {
      const bin = Math.min(count - 1, Math.floor((t - originMs) / binMs));
      const binEnd = originMs + (bin + 1) * binMs;
      const until = bin === count - 1 ? toMs : Math.min(toMs, binEnd);
      area[bin]! += value * (until - t);
      if (value > max[bin]!) max[bin] = value;
      t = until;
    }
  };
  for (const [atMs, delta] of events) {
    addSpan(prevMs, atMs, level);
    level += delta;
    prevMs = atMs;
    const bin = Math.min(count - 1, Math.max(0, Math.floor((atMs - originMs) / binMs)));
    if (level > max[bin]!) max[bin] = level;
  }
  return { mean: area.map((a) => a / binMs), max };
}
