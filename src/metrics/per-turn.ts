import { hitRatio } from './prefix-cache-tally.js';
import { hasSlos, meetsSlos, type Slos } from './goodput.js';
import type { RequestRecord } from './record.js';
import type { Stats } from './stats.js';
import type { SummaryInput } from './summary-types.js';
import { ValueSet, type SerializedValueSet } from './value-set.js';

/** Statistics of one user-turn index (1-based) across conversations, over non-warmup records. Stats cover completed records. */
export interface TurnSummary {
  turn: number;
  completed: number;
  failed: number;
  /** Milliseconds. */
  ttft_ms: Stats | null;
  /** Milliseconds to the first answer (content) token: after the reasoning, for a reasoning model. */
  ttft_content_ms: Stats | null;
  tpot_ms: Stats | null;
  e2el_ms: Stats | null;
  /** Tokens. */
  input_num_tokens: Stats | null;
  /** Tokens; only records whose server reported cached tokens. */
  cached_tokens: Stats | null;
  expected_cached_tokens: Stats | null;
  /** Sum cached / sum input over this turn's records whose cached tokens are known; null when none is known. */
  cache_hit_ratio: number | null;
  /** Share of this turn's requests that met every --goodput SLO; null without SLOs. */
  goodput_share: number | null;
}

/** The Stats of a TurnSummary, in its key order. */
const TURN_METRICS = ['ttft_ms', 'ttft_content_ms', 'tpot_ms', 'e2el_ms', 'input_num_tokens', 'cached_tokens', 'expected_cached_tokens'] as const;
type TurnMetric = (typeof TURN_METRICS)[number];

/** One turn of a histogram-mode TurnTable as toJSON() writes it. */
export interface SerializedTurn {
  turn: number;
  requests: number;
  completed: number;
  good: number;
  cached_sum: number;
  known_input_sum: number;
  metrics: Record<TurnMetric, SerializedValueSet>;
}

/** One turn's running counts and values. */
class TurnTally {
  requests = 0;
  completed = 0;
  good = 0;
  cachedSum = 0;
  knownInputSum = 0;
  readonly sets: Record<TurnMetric, ValueSet>;

  constructor(exact: boolean) {
    this.sets = Object.fromEntries(TURN_METRICS.map((m) => [m, exact ? ValueSet.exact() : ValueSet.histogram()])) as Record<TurnMetric, ValueSet>;
  }
}

/**
 * The per-turn table built one non-warmup record at a time: counts and ratios exact, Stats exact (arrays) or from
 * histograms (percentiles within 0.1%; memory bounded by the number of turns, not of records).
 */
export class TurnTable {
  readonly #slos: Slos | undefined;
  readonly #exact: boolean;
  readonly #turns = new Map<number, TurnTally>();

  constructor(options: { slos?: Slos; exact: boolean }) {
    this.#slos = hasSlos(options.slos) ? options.slos : undefined;
    this.#exact = options.exact;
  }

  /** Adds one non-warmup record. */
  add(r: SummaryInput): void {
    const t = this.#tally(r.turn);
    t.requests++;
    if (this.#slos !== undefined && meetsSlos(r, this.#slos)) t.good++;
    if (r.status !== 'ok') return;
    t.completed++;
    const s = t.sets;
    if (r.ttft_ms !== null) s.ttft_ms.add(r.ttft_ms);
    if (r.ttft_content_ms !== null) s.ttft_content_ms.add(r.ttft_content_ms);
    if (r.tpot_ms !== null) s.tpot_ms.add(r.tpot_ms);
    s.e2el_ms.add(r.e2el_ms);
    s.input_num_tokens.add(r.input_num_tokens);
    s.expected_cached_tokens.add(r.expected_cached_tokens);
    if (r.cached_tokens !== null) {
      s.cached_tokens.add(r.cached_tokens);
      t.cachedSum += r.cached_tokens;
      t.knownInputSum += r.input_num_tokens;
    }
  }

  /** Adds other's turns to these. */
  merge(other: TurnTable): this {
    for (const [turn, o] of other.#turns) {
      const t = this.#tally(turn);
      t.requests += o.requests;
      t.completed += o.completed;
      t.good += o.good;
      t.cachedSum += o.cachedSum;
      t.knownInputSum += o.knownInputSum;
      for (const m of TURN_METRICS) t.sets[m].merge(o.sets[m]);
    }
    return this;
  }

  /** One TurnSummary per turn seen, in ascending turn order. */
  summaries(): TurnSummary[] {
    return [...this.#turns.keys()]
      .sort((a, b) => a - b)
      .map((turn) => {
        const t = this.#turns.get(turn)!;
        const stats = Object.fromEntries(TURN_METRICS.map((m) => [m, t.sets[m].stats()])) as Record<TurnMetric, Stats | null>;
        return {
          turn,
          completed: t.completed,
          failed: t.requests - t.completed,
          ...stats,
          cache_hit_ratio: hitRatio(t.cachedSum, t.knownInputSum),
          goodput_share: this.#slos === undefined ? null : t.good / t.requests,
        };
      });
  }

  /** The table as plain data, for a histogram-mode table. */
  toJSON(): SerializedTurn[] {
    if (this.#exact) throw new Error('TurnTable.toJSON(): only a histogram-mode table is serialized');
    return [...this.#turns].map(([turn, t]) => ({
      turn,
      requests: t.requests,
      completed: t.completed,
      good: t.good,
      cached_sum: t.cachedSum,
      known_input_sum: t.knownInputSum,
      metrics: Object.fromEntries(TURN_METRICS.map((m) => [m, t.sets[m].toJSON()])) as Record<TurnMetric, SerializedValueSet>,
    }));
  }

  /** Restores a histogram-mode table from toJSON()'s output. */
  static fromJSON(value: readonly SerializedTurn[], options: { slos?: Slos }): TurnTable {
    const out = new TurnTable({ ...options, exact: false });
    for (const v of value) {
      const t = out.#tally(v.turn);
      t.requests = v.requests;
      t.completed = v.completed;
      t.good = v.good;
      t.cachedSum = v.cached_sum;
      t.knownInputSum = v.known_input_sum;
      for (const m of TURN_METRICS) t.sets[m] = ValueSet.fromJSON(v.metrics[m]);
    }
    return out;
  }

  #tally(turn: number): TurnTally {
    let t = this.#turns.get(turn);
    if (t === undefined) this.#turns.set(turn, (t = new TurnTally(this.#exact)));
    return t;
  }
}

/** One TurnSummary per turn index that has at least one non-warmup record, in ascending turn order (exact). */
export function summarizePerTurn(records: readonly RequestRecord[], options: { slos?: Slos } = {}): TurnSummary[] {
  const table = new TurnTable({ slos: options.slos, exact: true });
  for (const r of records) if (!r.warmup) table.add(r);
  return table.summaries();
}
