/**
 * Which measured records one warmup percentage drops, as the reference's --warmup-percentages: the first
 * floor(X% of n) of the n non-warmup records ordered by send time. Records sent at the same instant keep the order they
 * were added in (a stable sort): of those sent exactly at the cut's threshold, the first `ties` are dropped.
 */
export class WarmupCut {
  /** The percentage, in [0, 100). */
  readonly percent: number;
  /** Records dropped (the summary's warmup_excluded adds them). */
  readonly dropped: number;
  readonly #threshold: number;
  #ties: number;

  constructor(percent: number, dropped: number, threshold: number, ties: number) {
    this.percent = percent;
    this.dropped = dropped;
    this.#threshold = threshold;
    this.#ties = ties;
  }

  /** The key of this cut's summary in results.json's `warmup_percentages`, e.g. "50%". */
  get key(): string {
    return `${this.percent}%`;
  }

  /**
   * Whether the next non-warmup record, sent at `sentAtMs`, is dropped. Stateful (it counts the ties it has dropped):
   * call it once per record, in the order the records were added, on a fresh cut per pass.
   */
  drops(sentAtMs: number): boolean {
    if (sentAtMs < this.#threshold) return true;
    if (sentAtMs === this.#threshold && this.#ties > 0) {
      this.#ties--;
      return true;
    }
    return false;
  }
}

/** Checks warmup percentages (each within [0, 100), else a RangeError) and returns them ascending, without repeats. */
export function checkWarmupPercentages(percentages: readonly number[]): number[] {
  for (const p of percentages) if (!(p >= 0 && p < 100)) throw new RangeError(`warmup percentage must be within [0, 100), got ${p}`);
  return [...new Set(percentages)].sort((a, b) => a - b);
}

/** Records a cut of `percent` drops of `count`: floor(X% of count), as the reference's int(percent * len). */
export function droppedBy(percent: number, count: number): number {
  return Math.floor((percent / 100) * count);
}

/**
 * The cuts of `percentages` (checked ones) over `count` non-warmup records. `sortedSendTimes` gives their send times
 * (ms) in ascending order; it is called only when a percentage drops a record: one sort of the send times (8 bytes a
 * record) finds every threshold. A percentage that would drop every record gets no cut, as in the reference.
 */
export function warmupCuts(percentages: readonly number[], count: number, sortedSendTimes: () => Float64Array): WarmupCut[] {
  const cuts: WarmupCut[] = [];
  let sorted: Float64Array | null = null;
  for (const percent of percentages) {
    const dropped = droppedBy(percent, count);
    if (dropped >= count) continue;
    if (dropped === 0) {
      cuts.push(new WarmupCut(percent, 0, Number.NEGATIVE_INFINITY, 0));
      continue;
    }
    sorted ??= sortedSendTimes();
    if (sorted.length !== count) throw new Error(`warmupCuts: ${count} send times needed, got ${sorted.length}`);
    // Records sent before the threshold are dropped; of those sent exactly at it, the first `ties` in added order.
    const threshold = sorted[dropped]!;
    cuts.push(new WarmupCut(percent, dropped, threshold, dropped - lowerBound(sorted, threshold)));
  }
  return cuts;
}

/** The index of the first value >= x in an ascending array. */
function lowerBound(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
