import type { RequestRecord } from './record.js';
import type { SummaryBuilder } from './summary-builder.js';
import type { Summary, SummaryInput } from './summary-types.js';
import type { WarmupCut } from './warmup-cuts.js';

/**
 * The warmup-percentage summaries of one pass over a run's non-warmup records (the records given again, or a
 * RecordLog's rows), in the order they were added: each cut that drops records gets a SummaryBuilder of the records it
 * keeps. Cuts that drop nothing are the run's own summary.
 */
export class WarmupSummaries {
  readonly #out: Record<string, Summary> = {};
  readonly #pending: Array<{ cut: WarmupCut; builder: SummaryBuilder }> = [];
  readonly #warmup: number;
  readonly #expected: number;
  #measured = 0;

  /**
   * `cuts` fresh from warmupCuts() (they count ties as they go); `whole` the run's summary; `builder` a new builder as
   * the run's summary was built; `warmup` the run's warmup records; `measured` its non-warmup ones (the pass must see
   * them all).
   */
  constructor(cuts: readonly WarmupCut[], parts: { whole: () => Summary; builder: () => SummaryBuilder; warmup: number; measured: number }) {
    for (const cut of cuts) {
      // Cuts that drop nothing come first (percentages ascend), so the keys end up in ascending order.
      if (cut.dropped === 0) this.#out[cut.key] = parts.whole();
      else this.#pending.push({ cut, builder: parts.builder() });
    }
    this.#warmup = parts.warmup;
    this.#expected = parts.measured;
  }

  /** Whether any cut needs the pass (one drops records). */
  get needsPass(): boolean {
    return this.#pending.length > 0;
  }

  /** Feeds the next non-warmup record, sent at `sentAtMs`; `input` gives its fields, read only by cuts that keep it. */
  add(sentAtMs: number, input: () => SummaryInput): void {
    this.#measured++;
    let record: SummaryInput | undefined;
    for (const p of this.#pending) if (!p.cut.drops(sentAtMs)) p.builder.add((record ??= input()));
  }

  /** Feeds one record given again (warmup ones are skipped). */
  readonly visit = (r: RequestRecord): void => {
    if (!r.warmup) this.add(r.sent_at_ms, () => r);
  };

  /** The summaries, keyed "0%", "50%", ...; throws when the pass did not see every non-warmup record. */
  finish(): Record<string, Summary> {
    if (this.#pending.length > 0 && this.#measured !== this.#expected) {
      throw new Error(`warmup percentages: the records given again hold ${this.#measured} measured records, the aggregate ${this.#expected}`);
    }
    for (const p of this.#pending) this.#out[p.cut.key] = p.builder.summary(this.#warmup + p.cut.dropped);
    return this.#out;
  }
}
