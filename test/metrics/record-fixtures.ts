// Test fixtures for RequestRecord (not a test file: the runner's glob is test/*/*.test.ts).
import type { RequestRecord } from '../../src/metrics/record.js';

/** A completed record with plausible values; override any field. */
export function makeRecord(overrides: Partial<RequestRecord> = {}): RequestRecord {
  return {
    conversation_id: 'CONV_ID_0',
    conversation_index: 0,
    turn: 1,
    client_id: 0,
    warmup: false,
    retries: 0,
    stale_connection_resends: 0,
    start_time_ms: 1_700_000_000_000,
    sent_at_ms: 0,
    first_token_at_ms: 10,
    done_at_ms: 100,
    ttft_ms: 10,
    ttft_content_ms: 10,
    ttft_reasoning_ms: null,
    tpot_ms: 10,
    itl_ms: [10, 10],
    e2el_ms: 100,
    latency_ms: 100,
    input_num_tokens: 100,
    input_tokens_source: 'server',
    output_num_tokens: 10,
    output_tokens_source: 'server',
    reasoning_tokens: null,
    cached_tokens: null,
    expected_cached_tokens: 0,
    expected_cached_tokens_infinite: 0,
    expected_cached_tokens_own_history: 0,
    input_num_turns: 1,
    output_num_chunks: 3,
    output_num_first_chunk_tokens: 1,
    approx_cached_percent: 0,
    max_tokens: null,
    finish_reason: 'stop',
    scheduled_at_ms: null,
    schedule_lag_ms: null,
    queue_ms: 0,
    ttft_from_scheduled_ms: null,
    e2el_from_scheduled_ms: null,
    status: 'ok',
    error_kind: null,
    error: null,
    http_status: 200,
    ...overrides,
  };
}

/** A failed record of the given kind. */
export function makeFailed(kind: NonNullable<RequestRecord['error_kind']>, overrides: Partial<RequestRecord> = {}): RequestRecord {
  return makeRecord({
    status: 'error',
    error_kind: kind,
    error: `failed: ${kind}`,
    ttft_ms: null,
    first_token_at_ms: null,
    tpot_ms: null,
    itl_ms: [],
    output_num_tokens: 0,
    ...overrides,
  });
}
