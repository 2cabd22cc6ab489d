import { hasSlos, meetsSlos, type Slos } from './goodput.js';
import { LatencyHistogram } from './histogram.js';
import type { RequestRecord } from './record.js';
import { describe, type Stats } from './stats.js';

/** Statistics of one user-turn index (1-based) across conversations, over non-warmup records. Stats cover completed records. */
export interface TurnSummary {
  turn: number;
  completed: number;
  failed: number;
  /** Milliseconds. */
  ttft_ms: Stats | null;
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

/** One TurnSummary per turn index that has at least one non-warmup record, in ascending turn order. */
export function summarizePerTurn(records: readonly RequestRecord[], options: { slos?: Slos } = {}): TurnSummary[] {
  const byTurn = new Map<number, RequestRecord[]>();
  for (const r of records) {
    if (r.warmup) continue;
    let group = byTurn.get(r.turn);
    if (group === undefined) byTurn.set(r.turn, (group = []));
    group.push(r);
  }
  return [...byTurn.keys()].sort((a, b) => a - b).map((turn) => summarizeTurn(turn, byTurn.get(turn)!, options.slos));
}

function summarizeTurn(turn: number, records: readonly RequestRecord[], slos: Slos | undefined): TurnSummary {
  const ok = records.filter((r) => r.status === 'ok');
  const withCached = ok.filter((r) => r.cached_tokens !== null);
  let cachedSum = 0;
  let inputSum = 0;
  for (const r of withCached) {
    cachedSum += r.cached_tokens!;
    inputSum += r.input_num_tokens;
  }
  return {
    turn,
    completed: ok.length,
    failed: records.length - ok.length,
    ttft_ms: describe(ok.flatMap((r) => (r.ttft_ms === null ? [] : [r.ttft_ms]))),
    tpot_ms: describe(ok.flatMap((r) => (r.tpot_ms === null ? [] : [r.tpot_ms]))),
    e2el_ms: describe(ok.map((r) => r.e2el_ms)),
    input_num_tokens: describe(ok.map((r) => r.input_num_tokens)),
    cached_tokens: describe(withCached.map((r) => r.cached_tokens!)),
    expected_cached_tokens: describe(ok.map((r) => r.expected_cached_tokens)),
    cache_hit_ratio: inputSum > 0 ? cachedSum / inputSum : null,
    goodput_share: hasSlos(slos) ? records.filter((r) => meetsSlos(r, slos)).length / records.length : null,
  };
}

/**
 * Per-turn summaries built one record at a time in memory bounded by histograms (a run past its exact-analysis limit):
 * the same TurnSummary fields, counts and ratios exact, Stats from LatencyHistograms (percentiles within 0.1%).
 */
export class PerTurnTally {
  readonly #slos: Slos | undefined;
  readonly #turns = new Map<number, TurnTally>();

  constructor(options: { slos?: Slos } = {}) {
    this.#slos = hasSlos(options.slos) ? options.slos : undefined;
  }

  /** Adds one record (warmup records are ignored, as summarizePerTurn does). */
  add(r: RequestRecord): void {
    if (r.warmup) return;
    let t = this.#turns.get(r.turn);
    if (t === undefined) this.#turns.set(r.turn, (t = new TurnTally()));
    t.requests++;
    if (this.#slos !== undefined && meetsSlos(r, this.#slos)) t.good++;
    if (r.status !== 'ok') return;
    t.completed++;
    if (r.ttft_ms !== null) t.ttft.record(r.ttft_ms);
    if (r.tpot_ms !== null) t.tpot.record(r.tpot_ms);
    t.e2el.record(r.e2el_ms);
    t.input.record(r.input_num_tokens);
    t.expected.record(r.expected_cached_tokens);
    if (r.cached_tokens !== null) {
      t.cached.record(r.cached_tokens);
      t.cachedSum += r.cached_tokens;
      t.knownInputSum += r.input_num_tokens;
    }
  }

  /** One TurnSummary per turn seen, in ascending turn order. */
  summaries(): TurnSummary[] {
    return [...this.#turns.keys()]
      .sort((a, b) => a - b)
      .map((turn) => {
        const t = this.#turns.get(turn)!;
        return {
          turn,
          completed: t.completed,
          failed: t.requests - t.completed,
          ttft_ms: t.ttft.stats(),
          tpot_ms: t.tpot.stats(),
          e2el_ms: t.e2el.stats(),
          input_num_tokens: t.input.stats(),
          cached_tokens: t.cached.stats(),
          expected_cached_tokens: t.expected.stats(),
          cache_hit_ratio: t.knownInputSum > 0 ? t.cachedSum / t.knownInputSum : null,
          goodput_share: this.#slos === undefined ? null : t.good / t.requests,
        };
      });
  }
}

/** One turn's running counts and histograms. */
class TurnTally {
  requests = 0;
  completed = 0;
  good = 0;
  cachedSum = 0;
  knownInputSum = 0;
  readonly ttft = new LatencyHistogram();
  readonly tpot = new LatencyHistogram();
  readonly e2el = new LatencyHistogram();
  readonly input = new LatencyHistogram();
  readonly cached = new LatencyHistogram();
  readonly expected = new LatencyHistogram();
}
