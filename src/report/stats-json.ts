import type { RequestRecord } from '../metrics/record.js';

/** The keys of the reference's --stats-json-output objects, in its order. */
export const REFERENCE_STATS_KEYS = [
  'ttft_ms',
  'tpot_ms',
  'latency_ms',
  'start_time_ms',
  'input_num_turns',
  'input_num_tokens',
  'output_num_tokens',
  'output_num_chunks',
  'output_num_first_chunk_tokens',
  'approx_cached_percent',
  'conversation_id',
  'client_id',
] as const;

/**
 * The reference's --stats-json-output: one object per completed non-warmup request (the reference records only
 * successful requests) with exactly its keys. Where the reference has no "missing" value it writes numbers: a null ttft
 * (no streamed token) becomes latency_ms, as the reference does for a single-chunk answer; a null tpot becomes 0.
 * start_time_ms is epoch milliseconds here (the reference's is a perf_counter reading: only differences are meaningful).
 */
export function toReferenceStats(records: readonly RequestRecord[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const r of records) {
    if (r.warmup || r.status !== 'ok') continue;
    out.push({
      ttft_ms: r.ttft_ms ?? r.latency_ms,
      tpot_ms: r.tpot_ms ?? 0,
      latency_ms: r.latency_ms,
      start_time_ms: r.start_time_ms,
      input_num_turns: r.input_num_turns,
      input_num_tokens: r.input_num_tokens,
      output_num_tokens: r.output_num_tokens,
      output_num_chunks: r.output_num_chunks,
      output_num_first_chunk_tokens: r.output_num_first_chunk_tokens,
      approx_cached_percent: r.approx_cached_percent,
      conversation_id: r.conversation_id,
      client_id: r.client_id,
    });
  }
  return out;
}
