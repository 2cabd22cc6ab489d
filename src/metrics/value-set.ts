import { LatencyHistogram, type SerializedHistogram } from './histogram.js';
import { describe, NO_EXTRA_PERCENTILES, type Stats } from './stats.js';

/** Exact values an empty set has room for before its buffer first doubles. */
const INITIAL_CAPACITY = 16;

/** A ValueSet as toJSON() writes it: its exact values, or its histogram. */
export type SerializedValueSet = { values: number[] } | { histogram: SerializedHistogram };

/**
 * The values of one metric behind one Stats: exact (an array, sorted by describe() at the end) while there are at most
 * `limit` of them, then a LatencyHistogram of them all (percentiles within 0.1%; count, mean, std, min, max exact).
 * A set made with ValueSet.histogram() is a histogram from the start. Values are ms or tokens: a histogram of values
 * holds either.
 */
export class ValueSet {
  /**
   * The exact values, in [0, #count) of a buffer that doubles as it fills; null once a histogram. Float64Array, not
   * number[]: an array of whole numbers (Smis) changes its elements kind at its first fraction, and where that came
   * after add() was optimized it deoptimized add() ("not a Smi", issue 17); it also gave describe() arrays of two
   * kinds. A Float64Array has one.
   */
  #values: Float64Array | null;
  #count: number;
  #histogram: LatencyHistogram | null;
  readonly #limit: number;

  private constructor(values: Float64Array | null, count: number, histogram: LatencyHistogram | null, limit: number) {
    this.#values = values;
    this.#count = count;
    this.#histogram = histogram;
    this.#limit = limit;
  }

  /** Exact up to `limit` values, then a histogram. */
  static exact(limit = Number.POSITIVE_INFINITY): ValueSet {
    return new ValueSet(new Float64Array(INITIAL_CAPACITY), 0, null, limit);
  }

  /** A histogram from the start: `histogram`, or a new growing one (small until large values come). */
  static histogram(histogram: LatencyHistogram = new LatencyHistogram({ growing: true })): ValueSet {
    return new ValueSet(null, 0, histogram, 0);
  }

  /** Whether the Stats come from a histogram. */
  get approximate(): boolean {
    return this.#histogram !== null;
  }

  /** Values added. */
  get count(): number {
    return this.#values !== null ? this.#count : this.#histogram!.count;
  }

  /** Adds one value. */
  add(value: number): void {
    if (this.#histogram !== null) {
      this.#histogram.record(value);
    } else if (this.#count < this.#limit) {
      if (this.#count === this.#values!.length) this.#grow();
      this.#values![this.#count++] = value;
    } else {
      // Past the limit: the values so far move into a histogram, in the order they came, and every later one follows.
      this.#toHistogram().record(value);
    }
  }

  /**
   * Adds every value, in order. While they stay exact, one native copy: a run's end adds each record's ~128 gaps
   * here, 127,000 values for 1,000 requests, and a loop of add() calls ran them one by one, mostly before V8 had
   * optimized it (~10 ms, issue 17).
   */
  addMany(values: ArrayLike<number>): void {
    const count = this.#count + values.length;
    if (this.#values === null || count > this.#limit) {
      for (let i = 0; i < values.length; i++) this.add(values[i]!);
      return;
    }
    if (count > this.#values.length) this.#grow(count);
    this.#values.set(values, this.#count);
    this.#count = count;
  }

  /** Adds other's values to these (other is unchanged). An exact set that receives a histogram becomes one. */
  merge(other: ValueSet): this {
    if (other.#values !== null) this.addMany(other.#exact());
    else (this.#histogram ?? this.#toHistogram()).merge(other.#histogram!);
    return this;
  }

  /** Statistics of the values, with the `extra` percentiles too; null when there are none. */
  stats(extra: readonly number[] = NO_EXTRA_PERCENTILES): Stats | null {
    return this.#values !== null ? describe(this.#exact(), extra) : this.#histogram!.stats(extra);
  }

  /** The set as plain data (fromJSON() restores it). */
  toJSON(): SerializedValueSet {
    return this.#values !== null ? { values: Array.from(this.#exact()) } : { histogram: this.#histogram!.toJSON() };
  }

  /** Restores toJSON()'s output; an exact set keeps `limit`. */
  static fromJSON(value: SerializedValueSet, limit = Number.POSITIVE_INFINITY): ValueSet {
    if ('values' in value) return new ValueSet(Float64Array.from(value.values), value.values.length, null, limit);
    return new ValueSet(null, 0, LatencyHistogram.fromJSON(value.histogram), 0);
  }

  /** The exact values held (a view). */
  #exact(): Float64Array {
    return this.#values!.subarray(0, this.#count);
  }

  /** Doubles the buffer of exact values, or more to hold `atLeast`. */
  #grow(atLeast = 0): void {
    const grown = new Float64Array(Math.max(INITIAL_CAPACITY, this.#values!.length * 2, atLeast));
    grown.set(this.#values!);
    this.#values = grown;
  }

  #toHistogram(): LatencyHistogram {
    const histogram = new LatencyHistogram({ growing: true });
    histogram.recordMany(this.#exact());
    this.#values = null;
    this.#histogram = histogram;
    return histogram;
  }
}
