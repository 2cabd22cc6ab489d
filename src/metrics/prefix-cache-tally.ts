import type { RequestRecord } from './record.js';

/** The record fields the prefix-cache tally reads. */
export type PrefixCacheInput = Pick<
  RequestRecord,
  'turn' | 'status' | 'warmup' | 'input_num_tokens' | 'cached_tokens' | 'expected_cached_tokens' | 'expected_cached_tokens_infinite' | 'expected_cached_tokens_own_history'
>;

/** Token sums over completed non-warmup requests (one turn, or all). */
export interface PrefixCacheSums {
  requests: number;
  input_tokens: number;
  /** Input tokens of the requests whose server reported cached tokens. */
  known_input_tokens: number;
  cached_tokens: number;
  expected_cached_tokens: number;
  expected_cached_tokens_infinite: number;
  expected_cached_tokens_own_history: number;
  /** Σ max(0, expected_infinite − own_history): the expected hit no conversation's own history explains. */
  shared_prefix_tokens: number;
  /** Σ cached and Σ expected over requests with cached known and expected > 0 (the efficiency's terms). */
  efficiency_cached: number;
  efficiency_expected: number;
  /** The same for the own-history figure. */
  own_efficiency_cached: number;
  own_efficiency_expected: number;
}

/** PrefixCacheSums with the ratios results.json and the reports show (null where a denominator is 0). */
export interface PrefixCacheRow extends PrefixCacheSums {
  /** cached / known input. */
  hit_ratio: number | null;
  /** expected / input, expected_infinite / input, own_history / input. */
  expected_hit_ratio: number | null;
  expected_hit_ratio_infinite: number | null;
  expected_hit_ratio_own_history: number | null;
  /** shared_prefix_tokens / expected_cached_tokens_infinite. */
  shared_prefix_share: number | null;
  /** Σ cached / Σ expected (global model), and against the own-history figure. */
  efficiency: number | null;
  efficiency_own_history: number | null;
}

/** Which expected-cache model a run used, as results.json states it (`prefix_cache.model`). */
export interface ExpectedCacheModelDescription {
  /** Tokens per block. */
  block_size: number;
  /** `infinite` (no eviction) or `lru` (a KV capacity with least-recently-used eviction). */
  capacity_model: 'infinite' | 'lru';
  /** The capacity in tokens (whole blocks), null when infinite. */
  capacity_tokens: number | null;
  /** Where the capacity came from: `--kv-cache-tokens`, the server's /metrics gauge, or null. */
  capacity_source: string | null;
  /**
   * `global`: one index over every conversation of the run, in the order this process sent them. `per-worker` with
   * --workers: each worker thread indexes its own conversations (prefixes shared across threads are not seen).
   */
  scope: 'global' | 'per-worker';
}

/** results.json's `prefix_cache`: the expected-cache model used, then the totals and per-turn rows. */
export type RunPrefixCache = PrefixCacheSummary & { model: ExpectedCacheModelDescription };

/** The totals and one row per turn. */
export interface PrefixCacheSummary {
  totals: PrefixCacheRow;
  per_turn: Array<PrefixCacheRow & { turn: number }>;
}

function emptySums(): PrefixCacheSums {
  return {
    requests: 0,
    input_tokens: 0,
    known_input_tokens: 0,
    cached_tokens: 0,
    expected_cached_tokens: 0,
    expected_cached_tokens_infinite: 0,
    expected_cached_tokens_own_history: 0,
    shared_prefix_tokens: 0,
    efficiency_cached: 0,
    efficiency_expected: 0,
    own_efficiency_cached: 0,
    own_efficiency_expected: 0,
  };
}

function addTo(s: PrefixCacheSums, r: PrefixCacheInput): void {
  s.requests++;
  s.input_tokens += r.input_num_tokens;
  s.expected_cached_tokens += r.expected_cached_tokens;
  s.expected_cached_tokens_infinite += r.expected_cached_tokens_infinite;
  s.expected_cached_tokens_own_history += r.expected_cached_tokens_own_history;
  s.shared_prefix_tokens += Math.max(0, r.expected_cached_tokens_infinite - r.expected_cached_tokens_own_history);
  if (r.cached_tokens === null) return;
  s.known_input_tokens += r.input_num_tokens;
  s.cached_tokens += r.cached_tokens;
  if (r.expected_cached_tokens > 0) {
    s.efficiency_cached += r.cached_tokens;
    s.efficiency_expected += r.expected_cached_tokens;
  }
  if (r.expected_cached_tokens_own_history > 0) {
    s.own_efficiency_cached += r.cached_tokens;
    s.own_efficiency_expected += r.expected_cached_tokens_own_history;
  }
}

function mergeInto(s: PrefixCacheSums, o: PrefixCacheSums): void {
  for (const key of Object.keys(s) as (keyof PrefixCacheSums)[]) s[key] += o[key];
}

const ratio = (a: number, b: number): number | null => (b > 0 ? a / b : null);

function rowOf(s: PrefixCacheSums): PrefixCacheRow {
  return {
    ...s,
    hit_ratio: ratio(s.cached_tokens, s.known_input_tokens),
    expected_hit_ratio: ratio(s.expected_cached_tokens, s.input_tokens),
    expected_hit_ratio_infinite: ratio(s.expected_cached_tokens_infinite, s.input_tokens),
    expected_hit_ratio_own_history: ratio(s.expected_cached_tokens_own_history, s.input_tokens),
    shared_prefix_share: ratio(s.shared_prefix_tokens, s.expected_cached_tokens_infinite),
    efficiency: ratio(s.efficiency_cached, s.efficiency_expected),
    efficiency_own_history: ratio(s.own_efficiency_cached, s.own_efficiency_expected),
  };
}

/** PrefixCacheTally as toJSON() writes it. */
export interface SerializedPrefixCacheTally {
  totals: PrefixCacheSums;
  turns: Array<[number, PrefixCacheSums]>;
}

/**
 * The prefix-cache figures of a run, per turn and in all: actual cached tokens against the expected-cache model's
 * (with its capacity, infinite) and against the own-history figure. Sums only, so it merges exactly (worker threads,
 * shards) and is small (one row per turn).
 */
export class PrefixCacheTally {
  #totals = emptySums();
  #turns = new Map<number, PrefixCacheSums>();

  /** Counts one record (warmup and failed ones are left out). */
  add(r: PrefixCacheInput): void {
    if (r.warmup || r.status !== 'ok') return;
    addTo(this.#totals, r);
    let t = this.#turns.get(r.turn);
    if (t === undefined) this.#turns.set(r.turn, (t = emptySums()));
    addTo(t, r);
  }

  /** Adds other's sums to these. */
  merge(other: PrefixCacheTally): this {
    mergeInto(this.#totals, other.#totals);
    for (const [turn, o] of other.#turns) {
      let t = this.#turns.get(turn);
      if (t === undefined) this.#turns.set(turn, (t = emptySums()));
      mergeInto(t, o);
    }
    return this;
  }

  /** The totals and per-turn rows, turns ascending. */
  summary(): PrefixCacheSummary {
    return {
      totals: rowOf(this.#totals),
      per_turn: [...this.#turns].sort((a, b) => a[0] - b[0]).map(([turn, s]) => ({ turn, ...rowOf(s) })),
    };
  }

  toJSON(): SerializedPrefixCacheTally {
    return { totals: { ...this.#totals }, turns: [...this.#turns].map(([t, s]) => [t, { ...s }]) };
  }

  static fromJSON(value: SerializedPrefixCacheTally): PrefixCacheTally {
    const out = new PrefixCacheTally();
    out.#totals = { ...emptySums(), ...value.totals };
    for (const [t, s] of value.turns) out.#turns.set(t, { ...emptySums(), ...s });
    return out;
  }
}
