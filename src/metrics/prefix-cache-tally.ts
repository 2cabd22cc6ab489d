import { MISS_CAUSES, type MissCause } from './miss-causes.js';
import type { RequestRecord } from './record.js';
import type { RoutingLoss } from './replica-types.js';

export { MISS_CAUSES, type MissCause };

/** The record fields the prefix-cache tally reads. */
export type PrefixCacheInput = Pick<
  RequestRecord,
  | 'turn'
  | 'status'
  | 'warmup'
  | 'input_num_tokens'
  | 'input_tokens_source'
  | 'cached_tokens'
  | 'expected_cached_tokens'
  | 'expected_cached_tokens_infinite'
  | 'expected_cached_tokens_own_history'
  | 'cache_model_input_tokens'
  | 'warm_start_tokens'
  | 'miss_cause'
>;

/** The missed tokens of each cause, as flat sums (so that sums merge key by key). */
type MissSums = { [C in MissCause as `missed_${C}`]: number };

/** Token sums over completed non-warmup requests (one turn, or all). */
export interface PrefixCacheSums extends MissSums {
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
  /** Requests the expected-cache model had no figure for (their prompt's ids could not be had): left out above. */
  unmodelled_requests: number;
  /** Cached tokens a cache warm from before the run served (RequestRecord.warm_start_tokens): not in efficiency. */
  warm_start_tokens: number;
  /** Σ max(0, expected − (cached − warm start)) over requests with cached known: the misses, by cause below. */
  missed_tokens: number;
  /**
   * Σ max(0, (cached − warm start) − expected) over requests with cached known, and how many such requests: what the
   * server served of the run's own prompts beyond what the model expected (it read the cache at another moment than
   * the server, or saw the requests in another order). The model's own shortfall, which efficiency counts in its favour.
   */
  beyond_expected_tokens: number;
  beyond_expected_requests: number;
  /** Σ |model's prompt length − server's| and Σ server's, over requests with both: how far the two counts differ. */
  input_count_difference: number;
  server_input_tokens: number;
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
  /** Missed tokens and their causes (each cause's tokens; they add up to `tokens`). */
  misses: { tokens: number; causes: Record<MissCause, number> };
  /** input_count_difference / server_input_tokens: how far the model's prompt counts are from the server's. */
  token_count_disagreement: number | null;
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
   * Each replica's cache in the per-replica model (issue #31), tokens, when it is not `capacity_tokens`: a router page
   * that sums its replicas' capacity (the simulator's, `chatload_sim_replicas`) gives each pool its share.
   */
  replica_capacity_tokens?: number;
  /**
   * `global`: one index over every conversation of the run, in the order its requests' events came (with --workers,
   * one index in the coordinator fed by every worker thread, issue #31). `per-shard`: a merge of shards run as
   * separate processes (`chatload merge`), each with its own index: prefixes one shard sent are not counted for
   * another's requests (`scope_note` says so). `per-worker`: files of earlier versions, each worker thread's own index.
   */
  scope: 'global' | 'per-shard' | 'per-worker';
  /** What the scope means for the figures, when they are not one index's (a merge of shards). */
  scope_note?: string;
  /** Whose token ids the model counts in: the local tokenizer's, or the server's own (its tokenize endpoints). */
  token_ids?: 'local' | 'server';
  /** The engine's cache semantics the model ran (server-engine/cache-semantics.ts: where each value came from). */
  semantics?: { engine: string; block_size: number; shared_from: 'schedule' | 'prefill' | 'end'; slots: number | null; sources: string[] };
}

/** A model's semantics in a few words, as the merge's warning and compare's differences name them; '-' when unstated. */
export function semanticsText(model: ExpectedCacheModelDescription | null | undefined): string {
  const s = model?.semantics;
  return s === undefined ? '-' : `${s.engine}, ${s.block_size}-token blocks, shared_from ${s.shared_from}`;
}

/**
 * results.json's `prefix_cache`: the expected-cache model used, then the totals and per-turn rows. `comparable` is
 * false when the model counted in approximate tokens while the server counts in its own: then every figure that sets
 * the model's tokens against the server's (expected hit ratios, efficiency) is null, and `not_comparable` says why
 * with the measured disagreement of the two counts (absent, comparable, in files of earlier versions).
 */
export type RunPrefixCache = PrefixCacheSummary & {
  model: ExpectedCacheModelDescription;
  comparable?: boolean;
  not_comparable?: string | null;
  /** The one ideal cache against one cache per replica (replica-tally.ts); present only when replicas were named. */
  routing?: RoutingLoss;
};

/** Largest mean relative difference of the model's prompt counts from the server's that still counts as the same unit. */
export const COMPARABLE_DISAGREEMENT = 0.005;

/** The run's prefix_cache, its cross-unit figures nulled when the model's counts are approximate (see RunPrefixCache). */
export function runPrefixCache(summary: PrefixCacheSummary, model: ExpectedCacheModelDescription, exact: boolean): RunPrefixCache {
  const d = summary.totals.token_count_disagreement;
  // Approximate counts that match the server's (the simulator counts with the same approximate tokenizer) compare.
  if (exact || (d !== null && d <= COMPARABLE_DISAGREEMENT)) return { model, ...summary, comparable: true, not_comparable: null };
  const blank = <T extends PrefixCacheRow>(row: T): T => ({ ...row, expected_hit_ratio: null, expected_hit_ratio_infinite: null, efficiency: null });
  const measured = d === null ? 'the server reported no input counts to compare with' : `the model's prompt counts differ from the server's by ${(d * 100).toFixed(1)}% on average`;
  return {
    model,
    totals: blank(summary.totals),
    per_turn: summary.per_turn.map(blank),
    comparable: false,
    not_comparable: `approximate token counts: ${measured}; give --tokenizer (the model's tokenizer.json or id) or --tokenizer server`,
  };
}

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
    unmodelled_requests: 0,
    warm_start_tokens: 0,
    missed_tokens: 0,
    beyond_expected_tokens: 0,
    beyond_expected_requests: 0,
    input_count_difference: 0,
    server_input_tokens: 0,
    ...(Object.fromEntries(MISS_CAUSES.map((c) => [`missed_${c}`, 0])) as MissSums),
  };
}

/**
 * The prefix-cache hit ratio: cached tokens over the input tokens of the requests whose server reported its cached
 * tokens; null when none did. The one formula of every hit ratio chatload shows (the summary's, per turn, the tally's).
 */
export function hitRatio(cachedTokens: number, knownInputTokens: number): number | null {
  return knownInputTokens > 0 ? cachedTokens / knownInputTokens : null;
}

/**
 * A record's terms of the efficiency (Σ cached / Σ expected): its cached tokens less the warm-start ones, and its
 * expected ones; undefined when it has none (cached unknown, nothing expected, or no figure from the model). The one
 * rule every efficiency of chatload follows (the summary's, the tally's, per turn and in all).
 */
export function efficiencyTerms(r: Pick<RequestRecord, 'cached_tokens' | 'expected_cached_tokens' | 'cache_model_input_tokens' | 'warm_start_tokens'>): { cached: number; expected: number } | undefined {
  if (r.cached_tokens === null || r.expected_cached_tokens <= 0 || r.cache_model_input_tokens === null) return undefined;
  return { cached: r.cached_tokens - (r.warm_start_tokens ?? 0), expected: r.expected_cached_tokens };
}

function addTo(s: PrefixCacheSums, r: PrefixCacheInput): void {
  s.requests++;
  if (r.cache_model_input_tokens === null) {
    // No figure from the model: its zeros would read as "nothing expected".
    s.unmodelled_requests++;
    return;
  }
  if (r.cache_model_input_tokens !== undefined && r.input_tokens_source === 'server') {
    s.input_count_difference += Math.abs(r.cache_model_input_tokens - r.input_num_tokens);
    s.server_input_tokens += r.input_num_tokens;
  }
  s.input_tokens += r.input_num_tokens;
  s.expected_cached_tokens += r.expected_cached_tokens;
  s.expected_cached_tokens_infinite += r.expected_cached_tokens_infinite;
  s.expected_cached_tokens_own_history += r.expected_cached_tokens_own_history;
  s.shared_prefix_tokens += Math.max(0, r.expected_cached_tokens_infinite - r.expected_cached_tokens_own_history);
  if (r.cached_tokens === null) return;
  s.known_input_tokens += r.input_num_tokens;
  s.cached_tokens += r.cached_tokens;
  const warm = r.warm_start_tokens ?? 0;
  s.warm_start_tokens += warm;
  // What the run's own history explains: a warm cache's extra tokens are not the model's to predict.
  const served = r.cached_tokens - warm;
  const missed = Math.max(0, r.expected_cached_tokens - served);
  if (missed > 0) {
    s.missed_tokens += missed;
    s[`missed_${r.miss_cause ?? 'unexplained'}`] += missed;
  }
  const beyond = served - r.expected_cached_tokens;
  if (beyond > 0) {
    s.beyond_expected_tokens += beyond;
    s.beyond_expected_requests++;
  }
  const terms = efficiencyTerms(r);
  if (terms !== undefined) {
    s.efficiency_cached += terms.cached;
    s.efficiency_expected += terms.expected;
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
    hit_ratio: hitRatio(s.cached_tokens, s.known_input_tokens),
    expected_hit_ratio: ratio(s.expected_cached_tokens, s.input_tokens),
    expected_hit_ratio_infinite: ratio(s.expected_cached_tokens_infinite, s.input_tokens),
    expected_hit_ratio_own_history: ratio(s.expected_cached_tokens_own_history, s.input_tokens),
    shared_prefix_share: ratio(s.shared_prefix_tokens, s.expected_cached_tokens_infinite),
    efficiency: ratio(s.efficiency_cached, s.efficiency_expected),
    efficiency_own_history: ratio(s.own_efficiency_cached, s.own_efficiency_expected),
    misses: { tokens: s.missed_tokens, causes: Object.fromEntries(MISS_CAUSES.map((c) => [c, s[`missed_${c}`]])) as Record<MissCause, number> },
    token_count_disagreement: ratio(s.input_count_difference, s.server_input_tokens),
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
