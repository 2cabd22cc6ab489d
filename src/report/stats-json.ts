import type { RequestRecord } from '../metrics/record.js';
import { writeStreamAtomic } from '../store/atomic-write.js';
import { streamRequestsJsonl } from '../store/requests-jsonl.js';

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
    const stats = referenceStatsOf(r);
    if (stats !== null) out.push(stats);
  }
  return out;
}

/**
 * Writes --stats-json-output from a requests.jsonl in bounded memory: the records are streamed and the file is
 * byte-for-byte what writeJsonAtomic(path, toReferenceStats(all records)) writes (pretty JSON, 2-space indent).
 */
export async function writeReferenceStatsFile(path: string, requestsPath: string): Promise<void> {
  await writeStreamAtomic(path, async (write) => {
    let first = true;
    await streamRequestsJsonl(requestsPath, (r) => {
      const stats = referenceStatsOf(r);
      if (stats === null) return;
      write(`${first ? '[\n' : ',\n'}  ${JSON.stringify(stats, null, 2).replaceAll('\n', '\n  ')}`);
      first = false;
    });
    write(first ? '[]\n' : '\n]\n');
  });
}

/** One record's reference stats object; null for a record the reference would not have (warmup, failed). */
function referenceStatsOf(r: RequestRecord): Record<string, unknown> | null {
  if (r.warmup || r.status !== 'ok') return null;
  return {
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
  };
}
