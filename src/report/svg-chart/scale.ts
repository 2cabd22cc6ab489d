import { scaleLinear, scaleLog } from 'd3-scale';

/**
 * One position axis of a chart: a linear or logarithmic map from data values to pixels, with its ticks and their
 * labels. Ticks and labels come from d3-scale (`ticks(n)`, `tickFormat(n, spec)`), as Plot drew them; the map itself
 * is two precomputed coefficients, so placing a point costs a multiply and an add (a log first on a log axis), with no
 * closure call: the marks' loops call `at` once per point.
 */
export class AxisScale {
  /** The domain, data units; NaN when the chart has no value for this axis (nothing is then drawn on it). */
  readonly lo: number;
  readonly hi: number;
  /** The range, pixels: `r0` is where `lo` goes (the left or the bottom of the plot area). */
  readonly r0: number;
  readonly r1: number;
  readonly log: boolean;
  readonly #base: number;
  readonly #k: number;

  constructor(log: boolean, lo: number, hi: number, r0: number, r1: number) {
    this.log = log;
    this.lo = lo;
    this.hi = hi;
    this.r0 = r0;
    this.r1 = r1;
    const t0 = log ? Math.log(lo) : lo;
    const t1 = log ? Math.log(hi) : hi;
    // A domain of one value maps to the middle of the range (as d3's scales do).
    this.#k = t1 === t0 ? 0 : (r1 - r0) / (t1 - t0);
    this.#base = t1 === t0 ? (r0 + r1) / 2 : r0 - t0 * this.#k;
  }

  /** True when the domain holds values (an empty chart has none: no ticks, no grid). */
  get valid(): boolean {
    return Number.isFinite(this.lo) && Number.isFinite(this.hi);
  }

  /** The pixel position of `v`; NaN when it cannot be drawn (not finite, or ≤ 0 on a log axis). */
  at(v: number): number {
    if (this.log) {
      if (!(v > 0)) return NaN;
      return this.#base + Math.log(v) * this.#k;
    }
    return this.#base + v * this.#k;
  }

  /** The sign of the axis' direction as the axis label's arrow shows it: 0 for a domain of one value (no arrow). */
  get direction(): number {
    return this.valid && this.hi !== this.lo ? Math.sign(this.hi - this.lo) : 0;
  }

  #d3() {
    return (this.log ? scaleLog() : scaleLinear()).domain([this.lo, this.hi]).range([this.r0, this.r1]);
  }

  /** About `count` tick values inside the domain (d3's `ticks`: 1-2-5 steps, or powers of ten and their multiples on a log axis). */
  ticks(count: number): number[] {
    return this.valid ? this.#d3().ticks(count) : [];
  }

  /**
   * The labels of `ticks`: d3's `tickFormat(count, spec)` (count null for explicit ticks, as Plot passes it). On a log
   * axis it leaves some ticks' labels empty so the others do not crowd.
   */
  labels(ticks: readonly number[], count: number | null, spec: string | undefined): string[] {
    if (!this.valid) return ticks.map(String);
    const format = this.#d3().tickFormat(count ?? 10, spec);
    return ticks.map((t) => format(t));
  }
}

/** The extent of finite values (> 0 ones on a log axis) seen by `add`, NaN until one is added. */
export class Extent {
  lo = NaN;
  hi = NaN;
  readonly #log: boolean;

  constructor(log: boolean) {
    this.#log = log;
  }

  /** The domain: [lo, hi], or on a log axis with no value [1, 10] (as Plot's; a linear one stays NaN: no ticks). */
  domain(): [number, number] {
    return this.#log && !(this.lo <= this.hi) ? [1, 10] : [this.lo, this.hi];
  }

  add(v: number): void {
    if (!Number.isFinite(v) || (this.#log && v <= 0)) return;
    if (!(v >= this.lo)) this.lo = v;
    if (!(v <= this.hi)) this.hi = v;
  }
}
