import { efficiencyTerms, hitRatio } from './prefix-cache-tally.js';
import type { RequestRecord } from './record.js';
import type { ReplicaRow, RoutingLoss } from './replica-types.js';

export type { ReplicaRow, RoutingLoss } from './replica-types.js';

/*
 * Per-replica truth (issue #31): which replica behind a router served each request (RequestRecord.replica), and what
 * the router's choices cost the prefix cache: the expected-cache model's one ideal cache against one cache per
 * replica (expected_cached_tokens against expected_cached_tokens_per_replica). Sums and one entry per conversation,
 * so it merges exactly across worker threads and shards. Definitions: docs/METRICS.md, "Replicas".
 */

/** Most replicas tallied one by one; the rest are summed under OTHER_REPLICAS (a header that names every request apart). */
export const MAX_TALLIED_REPLICAS = 256;
/** The row of the replicas past MAX_TALLIED_REPLICAS. */
export const OTHER_REPLICAS = '(other)';

/** The record fields the replica tally reads. */
export type ReplicaInput = Pick<
  RequestRecord,
  | 'conversation_id'
  | 'status'
  | 'warmup'
  | 'input_num_tokens'
  | 'cached_tokens'
  | 'expected_cached_tokens'
  | 'cache_model_input_tokens'
  | 'warm_start_tokens'
  | 'replica'
  | 'expected_cached_tokens_per_replica'
>;

/** One replica's sums over its non-warmup requests (token sums over the completed ones). */
interface ReplicaSums {
  requests: number;
  completed: number;
  input_tokens: number;
  /** Input tokens of the completed requests whose server reported cached tokens. */
  known_input_tokens: number;
  cached_tokens: number;
  /** Σ expected_cached_tokens_per_replica over completed requests with one. */
  expected_cached_tokens: number;
  efficiency_cached: number;
  efficiency_expected: number;
  /** Σ expected_cached_tokens (the one ideal cache) over the same requests as expected_cached_tokens. */
  expected_cached_tokens_one_cache: number;
}

/**
 * The rows as results.json holds them: with `comparable` false (the model counted in approximate tokens while the
 * server counts in its own: prefix_cache.comparable), each efficiency is null, as the run's is; the routing figures set
 * the model against itself and stay.
 */
export function replicaRowsFor(rows: readonly ReplicaRow[], comparable: boolean): ReplicaRow[] {
  return comparable ? [...rows] : rows.map((r) => ({ ...r, efficiency: null }));
}

/** ReplicaTally as toJSON() writes it: each replica's sums, and each session's replica (null once split). */
export interface SerializedReplicaTally {
  replicas: Array<[string, ReplicaSums]>;
  sessions: Array<[string, string | null]>;
}

const empty = (): ReplicaSums => ({
  requests: 0,
  completed: 0,
  input_tokens: 0,
  known_input_tokens: 0,
  cached_tokens: 0,
  expected_cached_tokens: 0,
  efficiency_cached: 0,
  efficiency_expected: 0,
  expected_cached_tokens_one_cache: 0,
});

/** Per replica sums and each session's replicas; see the comment at the top. */
export class ReplicaTally {
  #replicas = new Map<string, ReplicaSums>();
  /** Each session's one replica so far, or null once a second one served it. */
  #sessions = new Map<string, string | null>();

  /** Counts one record (warmup ones and ones with no known replica are left out). */
  add(r: ReplicaInput): void {
    const replica = r.replica;
    if (r.warmup || replica === undefined || replica === null) return;
    const s = this.#sumsOf(replica);
    s.requests++;
    this.#noteSession(r.conversation_id, replica);
    if (r.status !== 'ok') return;
    s.completed++;
    s.input_tokens += r.input_num_tokens;
    if (r.cached_tokens !== null) {
      s.known_input_tokens += r.input_num_tokens;
      s.cached_tokens += r.cached_tokens;
    }
    const own = r.expected_cached_tokens_per_replica;
    if (own === undefined || own === null || r.cache_model_input_tokens === null) return;
    s.expected_cached_tokens += own;
    s.expected_cached_tokens_one_cache += r.expected_cached_tokens;
    // The run's efficiency rule (efficiencyTerms), against this replica's cache.
    const terms = efficiencyTerms({ ...r, expected_cached_tokens: own });
    if (terms !== undefined) {
      s.efficiency_cached += terms.cached;
      s.efficiency_expected += terms.expected;
    }
  }

  /** Adds other's sums and sessions to these. */
  merge(other: ReplicaTally): this {
    for (const [replica, o] of other.#replicas) {
      const s = this.#sumsOf(replica);
      for (const key of Object.keys(s) as (keyof ReplicaSums)[]) s[key] += o[key];
    }
    for (const [session, replica] of other.#sessions) {
      if (replica === null) this.#sessions.set(session, null);
      else this.#noteSession(session, replica);
    }
    return this;
  }

  /** True when some record named its replica. */
  get known(): boolean {
    return this.#replicas.size > 0;
  }

  /** One row per replica, by name (numbers in numeric order). */
  rows(): ReplicaRow[] {
    const names = [...this.#replicas.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    return names.map((replica) => {
      const s = this.#replicas.get(replica)!;
      return {
        replica,
        requests: s.requests,
        input_tokens: s.input_tokens,
        cached_tokens: s.cached_tokens,
        expected_cached_tokens: s.expected_cached_tokens,
        hit_ratio: hitRatio(s.cached_tokens, s.known_input_tokens),
        efficiency: s.efficiency_expected > 0 ? s.efficiency_cached / s.efficiency_expected : null,
        source: 'header' as const,
      };
    });
  }

  /** The loss to routing; null when no record named its replica. */
  routing(): RoutingLoss | null {
    if (!this.known) return null;
    let one = 0;
    let per = 0;
    for (const s of this.#replicas.values()) {
      one += s.expected_cached_tokens_one_cache;
      per += s.expected_cached_tokens;
    }
    let split = 0;
    for (const replica of this.#sessions.values()) if (replica === null) split++;
    return {
      expected_cached_tokens_one_cache: one,
      expected_cached_tokens_per_replica: per,
      lost_to_routing_tokens: one - per,
      lost_to_routing_share: one > 0 ? (one - per) / one : null,
      sessions: this.#sessions.size,
      sessions_split: split,
      replicas: this.#replicas.size,
    };
  }

  toJSON(): SerializedReplicaTally {
    return { replicas: [...this.#replicas].map(([r, s]) => [r, { ...s }]), sessions: [...this.#sessions] };
  }

  static fromJSON(value: SerializedReplicaTally | undefined): ReplicaTally {
    const out = new ReplicaTally();
    for (const [replica, s] of value?.replicas ?? []) out.#replicas.set(replica, { ...empty(), ...s });
    for (const [session, replica] of value?.sessions ?? []) out.#sessions.set(session, replica);
    return out;
  }

  #sumsOf(replica: string): ReplicaSums {
    let s = this.#replicas.get(replica);
    if (s !== undefined) return s;
    const name = this.#replicas.size < MAX_TALLIED_REPLICAS ? replica : OTHER_REPLICAS;
    s = this.#replicas.get(name);
    if (s === undefined) this.#replicas.set(name, (s = empty()));
    return s;
  }

  #noteSession(session: string, replica: string): void {
    const seen = this.#sessions.get(session);
    if (seen === undefined) this.#sessions.set(session, replica);
    else if (seen !== null && seen !== replica) this.#sessions.set(session, null);
  }
}
