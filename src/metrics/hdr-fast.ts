// Recording into hdr-histogram-js@3's histograms without its recordValue(): see recordFast().
import type { JsHistogram } from 'hdr-histogram-js/dist/JsHistogram.js';

/**
 * How far past a value a growing histogram grows its range at once: 64 times (6 more buckets, 48 KB), so that it
 * resizes a few times in all rather than at each new power of two (each resize copies the counts, ~50 µs).
 */
const GROWTH = 64;
/** Below this (2^31 µs, ~36 minutes) recordFast() computes the bucket with 32-bit integer arithmetic. */
const FAST_LIMIT_US = 2 ** 31;
/**
 * The fields of hdr-histogram-js@3's typed-array histograms that recordFast() updates: its own recordValue() computes
 * the bucket with Math.log2 and Math.pow and costs ~140 ns a value here, most of a record's analysis cost with ~100
 * inter-token gaps per record. histogram.test.ts checks that both give the same histogram.
 */
interface HdrCounts {
  _counts: Float64Array;
  _totalCount: number;
  countsArrayLength: number;
  maxValue: number;
  minNonZeroValue: number;
}

/**
 * Records `us` (a whole number of microseconds >= 0) as recordValue() would, for our configuration only (lowest
 * discernible value 1, 3 significant digits: 2048 sub-buckets, of which buckets past the first use the top 1024). Values
 * past FAST_LIMIT_US or past the allocated range take recordValue(), which also resizes; a `growing` histogram first
 * grows GROWTH times past the value.
 */
export function recordFast(h: JsHistogram, us: number, growing: boolean): void {
  if (us < FAST_LIMIT_US) {
    // floor(log2(us)) - 10 for us >= 2048, else bucket 0; the index is bucket * 1024 + (us >> bucket).
    const bucket = us < 2048 ? 0 : 21 - Math.clz32(us);
    const index = (bucket << 10) + (us >>> bucket);
    const c = h as unknown as HdrCounts;
    if (index < c.countsArrayLength) {
      c._counts[index]! += 1;
      c._totalCount += 1;
      if (us > c.maxValue) c.maxValue = us;
      if (us !== 0 && us < c.minNonZeroValue) c.minNonZeroValue = us;
      return;
    }
  }
  if (growing && us > h.highestTrackableValue) {
    // As recordValue() would on overflow, but GROWTH times past the value. (Only a growing histogram: the range is in
    // the encoded header, and results.json's histograms stay as recordValue() makes them.)
    h.resize(Math.min(Number.MAX_SAFE_INTEGER, us * GROWTH));
    h.highestTrackableValue = h.highestEquivalentValue(h.valueFromIndex(h.countsArrayLength - 1));
  }
  h.recordValue(us);
}
