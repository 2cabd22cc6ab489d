import type { StreamResult } from '../client/types.js';
import type { RequestRecord, ToolDivergence } from './record.js';
import type { MissCause } from './miss-causes.js';
import { roundMs } from './round.js';

/**
 * What the load knows about a request that the client's StreamResult does not: where it sits in the run, and how to count
 * tokens locally when the server gave no `usage`. Times are milliseconds from `performance.now()`.
 */
export interface RecordContext {
  conversationId: string;
  conversationIndex: number;
  /** 1-based user turn. */
  turn: number;
  clientId: number;
  warmup: boolean;
  retries: number;
  /** Sends resent on a fresh connection after a stale kept-alive one, over the request's attempts. */
  staleConnectionResends: number;
  /** performance.now() at the run's start: record times are relative to it. */
  runStartMs: number;
  /** Messages sent, system included. */
  inputNumTurns: number;
  /** Local token count of the last user message, for approx_cached_percent. */
  lastUserMessageTokens: number;
  /** The expected-cache model's hit for this prompt: with its capacity when it has one, else infinite (tokens). */
  expectedCachedTokens: number;
  /** The same with no eviction (tokens). */
  expectedCachedTokensInfinite: number;
  /** Prompt + completion tokens of this conversation's previous request (0 on the first turn). */
  expectedCachedTokensOwnHistory: number;
  /** The model's hit in the cache of the replica that served it (ExpectedHit.perReplica), when it has one. */
  expectedCachedTokensPerReplica?: number;
  /** The expected-cache model's account of this request (cache-model/expected-cache.ts `account`), when a model ran. */
  cacheModel?: { inputTokens: number | null; warmStartTokens: number; missCause: MissCause | null };
  maxTokens: number | null;
  /** Local prompt count. Called ONLY when the server gave no usage, which keeps tokenizing off the hot path. */
  countInputTokens: () => number;
  /** Local count of output text. Called only when needed (no server usage, or the first chunk's text). */
  countTextTokens: (text: string) => number;
  /** performance.now() at which the load model meant to send it; undefined when nothing scheduled it. */
  scheduledAtMs?: number;
  /** Time spent waiting for a concurrency slot, ms. */
  queueMs?: number;
  /** The session a sub-agent's conversation forked from (results: `parent_conversation_id`); absent for a session. */
  parentConversationId?: string;
  /** How the server's tool calls departed from the recorded answer's (ActiveConversation.toolDivergence); null when not. */
  toolDivergence?: ToolDivergence | null;
}

/**
 * Derives one RequestRecord from what the client observed. Definitions (docs/METRICS.md) follow `vllm bench serve`:
 * ttft = first content-or-reasoning chunk - send; e2el = done - send; tpot = (e2el - ttft) / (output tokens - 1);
 * itl = every gap between consecutive token-carrying chunks. Derived milliseconds are rounded to 3 decimals.
 * A failed request keeps whatever was measured before it failed.
 */
export function buildRecord(ctx: RecordContext, result: StreamResult): RequestRecord {
  const sentAtMs = result.sentAtMs;
  const ttftMs = result.firstTokenAtMs === undefined ? null : result.firstTokenAtMs - sentAtMs;
  const e2elMs = result.doneAtMs - sentAtMs;

  const usage = result.usage;
  const outputNumTokens = usage !== undefined ? usage.completionTokens : countOutputLocally(ctx, result);
  const inputNumTokens = usage !== undefined ? usage.promptTokens : ctx.countInputTokens();

  // vllm bench serve: tpot only exists with at least two output tokens (the first one is ttft's).
  const tpotMs = ttftMs !== null && outputNumTokens > 1 ? (e2elMs - ttftMs) / (outputNumTokens - 1) : null;

  const times = result.tokenChunkTimesMs;
  const itlMs: number[] = new Array<number>(Math.max(0, times.length - 1));
  for (let i = 1; i < times.length; i++) itlMs[i - 1] = roundMs(times[i]! - times[i - 1]!);

  // The client adds firstTokenChunkText to StreamResult; read it structurally so this compiles before and after it lands.
  const firstChunkText = (result as { firstTokenChunkText?: string }).firstTokenChunkText ?? '';
  // A local count of the first chunk can exceed the server's count of the whole answer (a non-streamed body is all
  // "first chunk"): a part is never larger than the whole.
  const firstChunkTokens = firstChunkText === '' ? 0 : Math.min(outputNumTokens, ctx.countTextTokens(firstChunkText));

  // The reference's upper bound on what a prefix cache could serve: everything but the last user message.
  // Clamped at 0: a server prompt count can be smaller than our local count of the last message.
  const approxCachedPercent =
    inputNumTokens > 0 ? Math.max(0, (100 * (inputNumTokens - ctx.lastUserMessageTokens)) / inputNumTokens) : 0;

  const error = result.error;
  return {
    conversation_id: ctx.conversationId,
    conversation_index: ctx.conversationIndex,
    turn: ctx.turn,
    client_id: ctx.clientId,
    warmup: ctx.warmup,
    retries: ctx.retries,
    stale_connection_resends: ctx.staleConnectionResends,
    start_time_ms: roundMs(performance.timeOrigin + sentAtMs),
    sent_at_ms: roundMs(sentAtMs - ctx.runStartMs),
    first_token_at_ms: result.firstTokenAtMs === undefined ? null : roundMs(result.firstTokenAtMs - ctx.runStartMs),
    done_at_ms: roundMs(result.doneAtMs - ctx.runStartMs),
    ttft_ms: ttftMs === null ? null : roundMs(ttftMs),
    ttft_content_ms: result.firstContentAtMs === undefined ? null : roundMs(result.firstContentAtMs - sentAtMs),
    ttft_reasoning_ms: result.firstReasoningAtMs === undefined ? null : roundMs(result.firstReasoningAtMs - sentAtMs),
    tpot_ms: tpotMs === null ? null : roundMs(tpotMs),
    itl_ms: itlMs,
    e2el_ms: roundMs(e2elMs),
    latency_ms: roundMs(e2elMs),
    input_num_tokens: inputNumTokens,
    input_tokens_source: usage !== undefined ? 'server' : 'local',
    output_num_tokens: outputNumTokens,
    output_tokens_source: usage !== undefined ? 'server' : 'local',
    reasoning_tokens: usage?.reasoningTokens ?? null,
    cached_tokens: usage?.cachedTokens ?? null,
    expected_cached_tokens: ctx.expectedCachedTokens,
    expected_cached_tokens_infinite: ctx.expectedCachedTokensInfinite,
    expected_cached_tokens_own_history: ctx.expectedCachedTokensOwnHistory,
    replica: result.replica ?? null,
    ...(result.replica === undefined ? {} : { expected_cached_tokens_per_replica: ctx.expectedCachedTokensPerReplica ?? null }),
    ...(result.invalidUsage === undefined ? {} : { invalid_usage: result.invalidUsage }),
    ...(ctx.cacheModel === undefined
      ? {}
      : { cache_model_input_tokens: ctx.cacheModel.inputTokens, warm_start_tokens: ctx.cacheModel.warmStartTokens, miss_cause: ctx.cacheModel.missCause }),
    input_num_turns: ctx.inputNumTurns,
    output_num_chunks: result.numTokenChunks,
    output_num_first_chunk_tokens: firstChunkTokens,
    approx_cached_percent: approxCachedPercent,
    max_tokens: ctx.maxTokens,
    finish_reason: result.finishReason ?? null,
    ...scheduleFields(ctx, result),
    ...toolFields(result),
    status: error === undefined ? 'ok' : 'error',
    error_kind: error?.kind ?? null,
    error: error?.message ?? null,
    http_status: result.httpStatus ?? error?.status ?? null,
    ...(ctx.parentConversationId === undefined ? {} : { parent_conversation_id: ctx.parentConversationId }),
    ...(ctx.toolDivergence == null ? {} : { tool_divergence: ctx.toolDivergence }),
  };
}

/** Content, reasoning and each call's arguments are separate streams, so each is counted on its own (no token spans their boundary). */
function countOutputLocally(ctx: RecordContext, result: StreamResult): number {
  let tokens = 0;
  if (result.content !== '') tokens += ctx.countTextTokens(result.content);
  if (result.reasoning !== '') tokens += ctx.countTextTokens(result.reasoning);
  for (const call of result.toolCalls ?? []) tokens += ctx.countTextTokens(call.function.name) + ctx.countTextTokens(call.function.arguments);
  return tokens;
}

/** The tool-call fields: set only when the answer called a tool, so plain chat records stay as they were. */
function toolFields(result: StreamResult): Pick<RequestRecord, 'tool_call_ms' | 'tool_calls'> {
  if (result.firstToolCallAtMs === undefined) return {};
  return { tool_call_ms: roundMs(result.firstToolCallAtMs - result.sentAtMs), tool_calls: result.toolCalls?.length ?? 0 };
}

/** The coordinated-omission fields: times from the scheduled send, beside the service times from the actual send. */
function scheduleFields(
  ctx: RecordContext,
  result: StreamResult,
): Pick<RequestRecord, 'scheduled_at_ms' | 'schedule_lag_ms' | 'queue_ms' | 'ttft_from_scheduled_ms' | 'e2el_from_scheduled_ms'> {
  const queueMs = roundMs(ctx.queueMs ?? 0);
  const at = ctx.scheduledAtMs;
  if (at === undefined) {
    return { scheduled_at_ms: null, schedule_lag_ms: null, queue_ms: queueMs, ttft_from_scheduled_ms: null, e2el_from_scheduled_ms: null };
  }
  // Timers can wake a fraction of a millisecond early (libuv caches its loop time), so a send can precede its
  // schedule slightly: such a send counts as on time, and times from the schedule are never below service times.
  const from = Math.min(at, result.sentAtMs);
  return {
    scheduled_at_ms: roundMs(at - ctx.runStartMs),
    schedule_lag_ms: roundMs(result.sentAtMs - from),
    queue_ms: queueMs,
    ttft_from_scheduled_ms: result.firstTokenAtMs === undefined ? null : roundMs(result.firstTokenAtMs - from),
    e2el_from_scheduled_ms: roundMs(result.doneAtMs - from),
  };
}
