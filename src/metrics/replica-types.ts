/* The replicas' figures as results.json holds them (replica-tally.ts makes them; docs/METRICS.md, "Replicas"). */

/** One entry of results.json's `replicas`. */
export interface ReplicaRow {
  /** The replica's name as its header (or Dynamo's nvext.worker_id) gave it, escaped; or its /metrics URL. */
  replica: string;
  /** Non-warmup requests it served (failed ones too: a replica that answered an error served it); null when unknown. */
  requests: number | null;
  /** Σ input tokens of its completed requests (server-reported where it reported them); null when unknown. */
  input_tokens: number | null;
  /** Σ server-reported cached tokens; null when unknown. */
  cached_tokens: number | null;
  /** Σ the model's hit in this replica's own cache; null when unknown (per-replica totals from /metrics deltas). */
  expected_cached_tokens: number | null;
  /** cached / input of the requests whose server reported cached tokens, as the run's hit ratio. */
  hit_ratio: number | null;
  /** Σ cached / Σ expected (this replica's cache), as the run's efficiency; null when unknown. */
  efficiency: number | null;
  /**
   * Where the row comes from: each request's response (`header`: its replica header, or the worker NVIDIA Dynamo's
   * nvext.worker_id names), or the counter deltas of the replica's /metrics.
   */
  source: 'header' | 'metrics';
}

/** results.json's `prefix_cache.routing`: what the router's choices cost the prefix cache (docs/METRICS.md). */
export interface RoutingLoss {
  /** Σ expected_cached_tokens (one ideal cache of every request) over completed requests with a per-replica figure. */
  expected_cached_tokens_one_cache: number;
  /** Σ expected_cached_tokens_per_replica over the same requests. */
  expected_cached_tokens_per_replica: number;
  /** one_cache − per_replica: the hits the router's choices lost (negative when the replicas' added capacity won more). */
  lost_to_routing_tokens: number;
  /** lost / one_cache; null when one_cache is 0. */
  lost_to_routing_share: number | null;
  /** Sessions (conversation ids) with a request on a known replica. */
  sessions: number;
  /** Sessions whose requests landed on more than one replica. */
  sessions_split: number;
  /** Replicas seen. */
  replicas: number;
}
