import { LatencyHistogram, type SerializedHistogram } from './histogram.js';
import { describe, NO_EXTRA_PERCENTILES, type Stats } from './stats.js';

/** A ValueSet as toJSON() writes it: its exact values, or its histogram. */
export type SerializedValueSet = { values: number[] } | { histogram: SerializedHistogram };

/**
 * The values of one metric behind one Stats: exact (an array, sorted by describe() at the end) while there are at most
 * `limit` of them, then a LatencyHistogram of them all (percentiles within 0.1%; count, mean, std, min, max exact).
 * A set made with ValueSet.histogram() is a histogram from the start. Values are ms or tokens: a histogram of values
 * holds either.
 */
export class ValueSet {
  #values: number[] | null;
  #histogram: LatencyHistogram | null;
  readonly #limit: number;

  private constructor(values: number[] | null, histogram: LatencyHistogram | null, limit: number) {
    this.#values = values;
    this.#histogram = histogram;
    this.#limit = limit;
  }

  /** Exact up to `limit` values, then a histogram. */
  static exact(limit = Number.POSITIVE_INFINITY): ValueSet {
    return new ValueSet([], null, limit);
  }

  /** A histogram from the start: `histogram`, or a new growing one (small until large values come). */
  static histogram(histogram: LatencyHistogram = new LatencyHistogram({ growing: true })): ValueSet {
    return new ValueSet(null, histogram, 0);
  }

  /** Whether the Stats come from a histogram. */
  get approximate(): boolean {
    return this.#histogram !== null;
  }

  /** Values added. */
  get count(): number {
    return this.#values?.length ?? this.#histogram!.count;
  }

  /** Adds one value. */
  add(value: number): void {
    if (this.#histogram !== null) {
      this.#histogram.record(value);
    } else if (this.#values!.length < this.#limit) {
      this.#values!.push(value);
    } else {
      // Past the limit: the values so far move into a histogram, in the order they came, and every later one follows.
      this.#toHistogram().record(value);
    }
  }

  /** Adds every value, in order. */
  addMany(values: ArrayLike<number>): void {
    for (let i = 0; i < values.length; i++) this.add(values[i]!);
  }

  /** Adds other's values to these (other is unchanged). An exact set that receives a histogram becomes one. */
  merge(other: ValueSet): this {
    if (other.#values !== null) this.addMany(other.#values);
    else (this.#histogram ?? this.#toHistogram()).merge(other.#histogram!);
    return this;
  }

  /** Statistics of the values, with the `extra` percentiles too; null when there are none. */
  stats(extra: readonly number[] = NO_EXTRA_PERCENTILES): Stats | null {
    return this.#values !== null ? describe(this.#values, extra) : this.#histogram!.stats(extra);
  }

  /** The set as plain data (fromJSON() restores it). */
  toJSON(): SerializedValueSet {
    return this.#values !== null ? { values: this.#values } : { histogram: this.#histogram!.toJSON() };
  }

  /** Restores toJSON()'s output; an exact set keeps `limit`. */
  static fromJSON(value: SerializedValueSet, limit = Number.POSITIVE_INFINITY): ValueSet {
    if ('values' in value) return new ValueSet([...value.values], null, limit);
    return new ValueSet(null, LatencyHistogram.fromJSON(value.histogram), 0);
  }

  #toHistogram(): LatencyHistogram {
    const histogram = new LatencyHistogram({ growing: true });
    histogram.recordMany(this.#values!);
    this.#values = null;
    this.#histogram = histogram;
    return histogram;
  }
}
