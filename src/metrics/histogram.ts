// hdr-histogram-js's index also loads its log reader and writer, whose top level builds Intl formatters (~15 ms of
// every start-up, issue 17): the three modules used are imported alone.
import { build as buildHdr } from 'hdr-histogram-js/dist/HistogramBuilder.js';
import { decodeFromCompressedBase64, encodeIntoCompressedBase64 } from 'hdr-histogram-js/dist/encoding.js';
import { JsHistogram } from 'hdr-histogram-js/dist/JsHistogram.js';
import type { RequestRecord } from './record.js';
import { recordFast } from './hdr-fast.js';
import { NO_EXTRA_PERCENTILES, percentileKey, type Stats, type StatField } from './stats.js';

/** Values are recorded in whole microseconds: HDR histograms count integers. */
const US_PER_MS = 1000;
/** 24 hours in microseconds: the range allocated up front (larger values still fit: the histogram resizes). */
const INITIAL_HIGHEST_US = 24 * 3600 * 1_000_000;
/** 3 significant digits: buckets no wider than 1/1024 of their value, so a bucket's midpoint is within 0.05%. */
const SIGNIFICANT_DIGITS = 3;
/** 64-bit (float) counts: exact to 2^53 per bucket, where 32-bit counts could wrap on billions of gaps. */
const BIT_BUCKET_SIZE = 64;
/** The smallest initial range a histogram can have (2 x the lowest discernible value, microseconds); it grows as needed. */
const SMALLEST_HIGHEST_US = 2048;
/** The percentiles a Stats holds, in the order percentile() takes them. */
const STATS_PERCENTILES = [
  ['p25', 25],
  ['p50', 50],
  ['p75', 75],
  ['p90', 90],
  ['p99', 99],
  ['p99_9', 99.9],
] as const satisfies ReadonlyArray<readonly [StatField, number]>;

/**
 * A LatencyHistogram as results.json stores it (`histograms.ttft_ms`, ...). `hdr` is the HDR histogram of the values
 * in microseconds (V2 compressed encoding, base64: a few hundred bytes); the other fields are exact, in milliseconds,
 * so the mean, std, min and max of a merge of histograms are exact too.
 */
export interface SerializedHistogram {
  /** HDR histogram of round(ms * 1000) (negatives as 0), compressed, base64. */
  hdr: string;
  /** Values recorded. */
  count: number;
  /** Sum of the values, ms. */
  sum: number;
  /** Sum of squared deviations from the mean, ms² (Welford's M2; sample variance = m2 / (count - 1)). */
  m2: number;
  /** Smallest and largest value recorded, ms; null when count is 0. */
  min: number | null;
  max: number | null;
}

/**
 * A mergeable latency distribution in milliseconds, for where exact arrays do not fit (millions of inter-token gaps)
 * or must travel between shards without their records.
 *
 * Why HDR: two histograms merge by adding their bucket counts, so shards and worker threads combine exactly as one
 * histogram of the union would; memory is bounded by the value range, not the count (tens of KB for latencies up to
 * a day); and with 3 significant digits every value sits in a bucket no wider than 1/1024 of it.
 *
 * What is exact: count, mean (running sum), std (sample, ddof = 1, from Welford's M2, merged with Chan's formula),
 * min and max, through merges and serialization alike. What is approximate: the percentiles. Each is computed like
 * describe() (numpy "linear": interpolation between the two nearest ranks), with each rank's value taken as its
 * bucket's midpoint, clamped to [min, max]. Values are recorded at 1 µs resolution (round(ms * 1000); a positive
 * value under 1 µs counts as 1 µs, zero and negatives as 0), so a percentile is within 0.1% of the exact one (at
 * most 0.05% from the bucket, 0.025% from the rounding above 2 ms; below 2 ms buckets are 1 µs wide and only the
 * rounding, at most 0.5 µs, remains). Latencies chatload records are already rounded to microseconds.
 */
export class LatencyHistogram {
  #hdr: JsHistogram;
  /** Grows its range GROWTH times past a value that does not fit (see the constructor). */
  readonly #growing: boolean;
  #count = 0;
  #sum = 0;
  /** Welford's running mean, kept for M2's updates (the reported mean is sum / count). */
  #mean = 0;
  #m2 = 0;
  #min = Number.POSITIVE_INFINITY;
  #max = Number.NEGATIVE_INFINITY;

  /**
   * `growing: true` starts with the smallest range (16 KB of buckets) and grows with the largest value recorded, instead
   * of allocating a day's range up front (~227 KB): for the many histograms that are never written to results.json
   * (per turn, per context bucket), whose memory adds up. The percentiles are the same either way; only the encoded
   * header (its highest trackable value) differs.
   */
  constructor(options: { growing?: boolean } = {}) {
    this.#growing = options.growing === true;
    this.#hdr = asJs(
      buildHdr({
        bitBucketSize: BIT_BUCKET_SIZE,
        autoResize: true,
        lowestDiscernibleValue: 1,
        highestTrackableValue: options.growing === true ? SMALLEST_HIGHEST_US : INITIAL_HIGHEST_US,
        numberOfSignificantValueDigits: SIGNIFICANT_DIGITS,
        useWebAssembly: false,
      }),
    );
  }

  /** Values recorded. */
  get count(): number {
    return this.#count;
  }

  /** Records one value, ms. Non-finite values are ignored. */
  record(ms: number): void {
    if (!Number.isFinite(ms)) return;
    recordFast(this.#hdr, toMicros(ms), this.#growing);
    this.#count++;
    this.#sum += ms;
    const delta = ms - this.#mean;
    this.#mean += delta / this.#count;
    this.#m2 += delta * (ms - this.#mean);
    if (ms < this.#min) this.#min = ms;
    if (ms > this.#max) this.#max = ms;
  }

  /** Records every value, ms. */
  recordMany(values: Iterable<number>): void {
    for (const value of values) this.record(value);
  }

  /** Adds `other`'s values to this histogram (other is unchanged). The result is the histogram of the union. */
  merge(other: LatencyHistogram): this {
    if (other.#count === 0) return this;
    this.#hdr.add(other.#hdr);
    this.#combine(other.#count, other.#sum, other.#m2, other.#min, other.#max);
    return this;
  }

  /** Statistics of the values recorded (same shape as describe()); null when there are none. See the class comment. */
  stats(extra: readonly number[] = NO_EXTRA_PERCENTILES): Stats | null {
    const n = this.#count;
    if (n === 0) return null;
    // The ranks numpy's linear method reads for each percentile, then one pass over the buckets finds their values.
    const ranks = new Set<number>();
    for (const p of [...STATS_PERCENTILES.map(([, q]) => q), ...extra]) {
      const rank = (p / 100) * (n - 1);
      ranks.add(Math.floor(rank));
      ranks.add(Math.min(Math.floor(rank) + 1, n - 1));
    }
    const valueAt = this.#valuesAtRanks([...ranks].sort((a, b) => a - b));
    const out: Stats = {
      count: n,
      mean: this.#sum / n,
      std: n > 1 ? Math.sqrt(Math.max(0, this.#m2) / (n - 1)) : 0,
      min: this.#min,
      p25: 0,
      p50: 0,
      p75: 0,
      p90: 0,
      p99: 0,
      p99_9: 0,
      max: this.#max,
    };
    const at = (p: number): number => {
      const rank = (p / 100) * (n - 1);
      const lo = Math.floor(rank);
      const lower = valueAt.get(lo)!;
      const upper = valueAt.get(Math.min(lo + 1, n - 1))!;
      const t = rank - lo;
      // As percentile() in stats.ts (numpy's _lerp), so equal inputs interpolate identically.
      return t >= 0.5 ? upper - (upper - lower) * (1 - t) : lower + (upper - lower) * t;
    };
    for (const [key, p] of STATS_PERCENTILES) out[key] = at(p);
    if (extra !== NO_EXTRA_PERCENTILES && extra.length > 0) out.percentiles = Object.fromEntries(extra.map((p) => [percentileKey(p), at(p)]));
    return out;
  }

  /** The HDR part alone (microseconds, V2 compressed, base64). Use toJSON() to keep the exact fields too. */
  toBase64(): string {
    return encodeIntoCompressedBase64(this.#hdr);
  }

  /**
   * A histogram from the HDR part alone (toBase64()): the count is exact; sum, std, min and max are estimated from the
   * buckets (bucket midpoints). Prefer fromJSON(), which restores them exactly.
   */
  static fromBase64(base64: string): LatencyHistogram {
    const out = new LatencyHistogram();
    const decoded = decode(base64);
    out.#hdr = decoded;
    const n = decoded.totalCount;
    if (n === 0) return out;
    let sum = 0;
    let sumSquares = 0;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < decoded.countsArrayLength; i++) {
      const c = decoded.getCountAtIndex(i);
      if (c === 0) continue;
      const ms = decoded.medianEquivalentValue(decoded.valueFromIndex(i)) / US_PER_MS;
      sum += c * ms;
      sumSquares += c * ms * ms;
      min = Math.min(min, ms);
      max = Math.max(max, ms);
    }
    out.#count = n;
    out.#sum = sum;
    out.#mean = sum / n;
    out.#m2 = Math.max(0, sumSquares - (sum * sum) / n);
    out.#min = min;
    out.#max = max;
    return out;
  }

  /** The serialized form (results.json's `histograms`). JSON.stringify() calls it. */
  toJSON(): SerializedHistogram {
    const empty = this.#count === 0;
    return { hdr: this.toBase64(), count: this.#count, sum: this.#sum, m2: this.#m2, min: empty ? null : this.#min, max: empty ? null : this.#max };
  }

  /** Restores a histogram from toJSON()'s output, exactly. Throws a TypeError when `value` does not have that shape. */
  static fromJSON(value: unknown): LatencyHistogram {
    if (!isSerializedHistogram(value)) throw new TypeError('not a serialized LatencyHistogram ({ hdr, count, sum, m2, min, max })');
    const out = new LatencyHistogram();
    out.#hdr = decode(value.hdr);
    if (out.#hdr.totalCount !== value.count) {
      throw new TypeError(`serialized LatencyHistogram: count ${value.count} does not match its HDR part (${out.#hdr.totalCount})`);
    }
    if (value.count > 0) out.#combine(value.count, value.sum, value.m2, value.min ?? 0, value.max ?? 0);
    return out;
  }

  /** Folds another set's exact moments into this one's (Chan et al.'s parallel variance). */
  #combine(count: number, sum: number, m2: number, min: number, max: number): void {
    const n = this.#count + count;
    const delta = sum / count - (this.#count > 0 ? this.#sum / this.#count : 0);
    this.#m2 = this.#count === 0 ? m2 : this.#m2 + m2 + (delta * delta * this.#count * count) / n;
    this.#count = n;
    this.#sum += sum;
    this.#mean = this.#sum / n;
    if (min < this.#min) this.#min = min;
    if (max > this.#max) this.#max = max;
  }

  /** The value (ms, a bucket midpoint clamped to [min, max]) at each 0-based rank of the sorted values; ranks ascending. */
  #valuesAtRanks(ranks: readonly number[]): Map<number, number> {
    const out = new Map<number, number>();
    const h = this.#hdr;
    let next = 0;
    let below = 0;
    for (let i = 0; i < h.countsArrayLength && next < ranks.length; i++) {
      const c = h.getCountAtIndex(i);
      if (c === 0) continue;
      below += c;
      if (ranks[next]! >= below) continue;
      const ms = Math.min(this.#max, Math.max(this.#min, h.medianEquivalentValue(h.valueFromIndex(i)) / US_PER_MS));
      while (next < ranks.length && ranks[next]! < below) out.set(ranks[next++]!, ms);
    }
    // The ends are known exactly: the smallest and largest value recorded.
    out.set(0, this.#min);
    out.set(this.#count - 1, this.#max);
    return out;
  }
}

/** round(ms * 1000); a positive value under 1 µs counts as 1 µs, so that only zero (and negatives) fall in bucket 0. */
function toMicros(ms: number): number {
  if (ms <= 0) return 0;
  return Math.max(1, Math.round(ms * US_PER_MS));
}

function decode(base64: string): JsHistogram {
  const h = asJs(decodeFromCompressedBase64(base64, BIT_BUCKET_SIZE, false));
  // Decoding does not keep autoResize: without it, merging in a histogram with larger values would throw.
  h.autoResize = true;
  return h;
}

/** build() in pure-JS mode returns a JsHistogram, whose bucket accessors the percentiles need. */
function asJs(h: ReturnType<typeof buildHdr>): JsHistogram {
  if (!(h instanceof JsHistogram)) throw new TypeError('expected a pure-JS HDR histogram');
  return h;
}

function isSerializedHistogram(value: unknown): value is SerializedHistogram {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const finite = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x);
  const bound = (x: unknown): boolean => x === null || finite(x);
  return typeof v.hdr === 'string' && finite(v.count) && (v.count as number) >= 0 && finite(v.sum) && finite(v.m2) && bound(v.min) && bound(v.max) && ((v.count as number) === 0 || (v.min !== null && v.max !== null));
}

/** The latency metrics results.json carries histograms of (`histograms`), as keys of the summary's metrics. */
export const HISTOGRAM_METRICS = ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms'] as const;
/** One of HISTOGRAM_METRICS. */
export type HistogramMetric = (typeof HISTOGRAM_METRICS)[number];
/** results.json's `histograms`: one serialized LatencyHistogram per latency metric. */
export type SerializedHistograms = Record<HistogramMetric, SerializedHistogram>;

/**
 * TTFT, TPOT, ITL (every gap) and E2EL of a run as LatencyHistograms, over the populations the summary uses: completed
 * non-warmup records; TTFT where a first token came, TPOT where there are two output tokens or more. Shards merge
 * these without their records.
 */
export class LatencyHistograms {
  /** One histogram per metric, ms. */
  readonly byMetric: Record<HistogramMetric, LatencyHistogram> = {
    ttft_ms: new LatencyHistogram(),
    tpot_ms: new LatencyHistogram(),
    itl_ms: new LatencyHistogram(),
    e2el_ms: new LatencyHistogram(),
  };

  /** Histograms of these records (warmup and failed ones are left out). */
  static fromRecords(records: Iterable<RequestRecord>): LatencyHistograms {
    const out = new LatencyHistograms();
    for (const record of records) out.add(record);
    return out;
  }

  /** Records one record's latencies; a warmup or failed record is ignored. */
  add(record: RequestRecord): void {
    if (!countsInHistograms(record)) return;
    if (record.ttft_ms !== null) this.byMetric.ttft_ms.record(record.ttft_ms);
    if (record.tpot_ms !== null) this.byMetric.tpot_ms.record(record.tpot_ms);
    this.byMetric.itl_ms.recordMany(record.itl_ms);
    this.byMetric.e2el_ms.record(record.e2el_ms);
  }

  /** Adds other's histograms to these. */
  merge(other: LatencyHistograms): this {
    for (const metric of HISTOGRAM_METRICS) this.byMetric[metric].merge(other.byMetric[metric]);
    return this;
  }

  /** Values recorded per metric. */
  counts(): Record<HistogramMetric, number> {
    return { ttft_ms: this.byMetric.ttft_ms.count, tpot_ms: this.byMetric.tpot_ms.count, itl_ms: this.byMetric.itl_ms.count, e2el_ms: this.byMetric.e2el_ms.count };
  }

  /** results.json's `histograms`. */
  toJSON(): SerializedHistograms {
    return { ttft_ms: this.byMetric.ttft_ms.toJSON(), tpot_ms: this.byMetric.tpot_ms.toJSON(), itl_ms: this.byMetric.itl_ms.toJSON(), e2el_ms: this.byMetric.e2el_ms.toJSON() };
  }

  /** Restores toJSON()'s output exactly. Throws a TypeError when a metric is missing or malformed. */
  static fromJSON(value: unknown): LatencyHistograms {
    if (typeof value !== 'object' || value === null) throw new TypeError('not a serialized LatencyHistograms object');
    const v = value as Record<string, unknown>;
    const out = new LatencyHistograms();
    for (const metric of HISTOGRAM_METRICS) out.byMetric[metric] = LatencyHistogram.fromJSON(v[metric]);
    return out;
  }
}

/** Whether a record belongs to the histograms' (and the summary metrics') population: completed and not warmup. */
export function countsInHistograms(record: RequestRecord): boolean {
  return !record.warmup && record.status === 'ok';
}
