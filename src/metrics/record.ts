import type { ErrorKind } from '../client/types.js';
import type { MissCause } from './miss-causes.js';

/** How an answer diverged from the dataset's recorded tool-calling step (RequestRecord.tool_divergence). */
export type ToolDivergence = 'missing' | 'unexpected' | 'count';

/** Where a token count came from: the server's `usage`, or chatload's own tokenizer. */
export type TokenSource = 'server' | 'local';

/**
 * One request, as written to requests.jsonl (one JSON object per line, appended as each request ends).
 * Plain, complete data: every summary is derived from these records. Times are milliseconds.
 * Field names follow the reference tool where it has one (ttft_ms, tpot_ms, latency_ms, start_time_ms, ...).
 */
export interface RequestRecord {
  conversation_id: string;
  /** Position of the conversation in the dataset (0-based). */
  conversation_index: number;
  /** 1-based user turn within the conversation. */
  turn: number;
  client_id: number;
  /** True for --warmup-step requests, which summaries exclude. */
  warmup: boolean;
  /** Retries made before this final attempt (0 when the first attempt was final). */
  retries: number;
  /**
   * Times a send of this request died on a reused keep-alive connection that the server had already closed, before
   * any response byte, and was resent at once on a fresh connection (llama-server closes after every stream). Not
   * retries and not failures: the times above are the resend's. 0 almost always.
   */
  stale_connection_resends: number;
  /** Wall-clock start, epoch milliseconds (performance.timeOrigin + sent_at). */
  start_time_ms: number;
  /** Monotonic times relative to the run's start (ms): when the request was sent, first token, end. */
  sent_at_ms: number;
  first_token_at_ms: number | null;
  done_at_ms: number;
  /** First token of content or reasoning minus send. Null when no token arrived. */
  ttft_ms: number | null;
  /** First content token minus send, and first reasoning token minus send, when each exists. */
  ttft_content_ms: number | null;
  ttft_reasoning_ms: number | null;
  /** (e2el - ttft) / (output tokens - 1); null with fewer than 2 output tokens. */
  tpot_ms: number | null;
  /** Gaps between consecutive token-carrying chunks (ms), rounded to microseconds. */
  itl_ms: number[];
  /** End-to-end latency: done minus send. `latency_ms` repeats it under the reference's name. */
  e2el_ms: number;
  latency_ms: number;
  input_num_tokens: number;
  input_tokens_source: TokenSource;
  output_num_tokens: number;
  output_tokens_source: TokenSource;
  /** Reasoning tokens within output_num_tokens (`usage.completion_tokens_details.reasoning_tokens`); null when not reported. */
  reasoning_tokens: number | null;
  /** Server-reported cached prompt tokens; null when the server does not report them. */
  cached_tokens: number | null;
  /**
   * What a prefix cache could have served of this prompt: its longest block-aligned prefix already seen in this run,
   * from any conversation (the global expected-cache model, docs/METRICS.md), with the --kv-cache-tokens capacity
   * and LRU eviction when a capacity is known, else with no eviction.
   */
  expected_cached_tokens: number;
  /** The same with no eviction (equal to expected_cached_tokens when no capacity is modelled). */
  expected_cached_tokens_infinite: number;
  /** Prompt + completion tokens of this conversation's own previous request (the per-conversation figure). 0 on turn 1. */
  expected_cached_tokens_own_history: number;
  /**
   * The replica behind a router that served it, from a response header (--replica-header), else from the body's
   * worker (NVIDIA Dynamo's `nvext.worker_id`: `<worker id> dp <rank>`); bounded to 128 characters and escaped (server
   * data); null when unknown (no header or worker, or it failed before any response). Absent in files of earlier
   * versions.
   */
  replica?: string | null;
  /**
   * With `replica`: the expected-cache model's hit in that replica's own cache (one cache per replica, fed only the
   * requests routed to it, as the one ideal cache of expected_cached_tokens is fed all); null when the model had no
   * figure. Absent without a replica.
   */
  expected_cached_tokens_per_replica?: number | null;
  /**
   * The prompt's length in the expected-cache model's ids (the server's own when it tokenizes for chatload: results'
   * `tokenizer`); null when the model had no figure for this request (its prompt's ids could not be had). Absent in
   * files of earlier versions.
   */
  cache_model_input_tokens?: number | null;
  /**
   * Cached tokens beyond anything this run had sent or received before the request, by more than a block: what a
   * cache warm from before the run served (kept out of efficiency and of the misses). 0 (or absent) otherwise.
   */
  warm_start_tokens?: number;
  /** Why the server cached less than expected, when it did (docs/METRICS.md, "Why the cache missed"); null otherwise. */
  miss_cause?: MissCause | null;
  /**
   * Usage fields the server sent that cannot be true (a negative or fractional count, one past a billion, cached
   * above prompt or reasoning above completion tokens), dropped: the counts above do not use them. Absent when none.
   */
  invalid_usage?: string[];
  /** Messages sent, system message included. */
  input_num_turns: number;
  output_num_chunks: number;
  /** Tokens in the first chunk (local count of its text). */
  output_num_first_chunk_tokens: number;
  /** The reference's upper bound: 100 * (input tokens - last user message tokens) / input tokens. */
  approx_cached_percent: number;
  /** max_tokens sent (null when none was sent). */
  max_tokens: number | null;
  finish_reason: string | null;
  /**
   * When the load model meant to send it (monotonic, relative to the run start): the session's arrival or think-time
   * end in the open loop, the pacing schedule with --request-rate. Null when nothing scheduled it (plain closed loop).
   */
  scheduled_at_ms: number | null;
  /** sent_at - scheduled_at: how late the send was (the client, the concurrency cap). Null without a schedule. */
  schedule_lag_ms: number | null;
  /** Time spent waiting for a --max-concurrency slot (part of the lag). 0 without a cap. */
  queue_ms: number;
  /** TTFT and E2EL measured from the scheduled time: what a user arriving on schedule saw. Null without a schedule. */
  ttft_from_scheduled_ms: number | null;
  e2el_from_scheduled_ms: number | null;
  /**
   * Agentic sessions (issue #14). Time to the first `tool_calls` delta (first call chunk - send), beside TTFT; null
   * (or absent in older files) when the answer called no tool.
   */
  tool_call_ms?: number | null;
  /** Tool calls in the answer (0 when none). */
  tool_calls?: number;
  /**
   * How the server's answer diverged from the dataset's recorded step, when it did (the recorded assistant turn then
   * went into the history instead): `missing` (the dataset called a tool, the server did not), `unexpected` (the
   * server called a tool where the dataset answered in text), `count` (a different number of calls than recorded
   * tool results). Null when it followed the dataset.
   */
  tool_divergence?: ToolDivergence | null;
  /** On a sub-agent's request: the session it forked from (null otherwise). */
  parent_conversation_id?: string | null;
  status: 'ok' | 'error';
  error_kind: ErrorKind | null;
  error: string | null;
  http_status: number | null;
}
