import type { ChatMessage, ToolCall } from '../tokenizer/types.js';

/**
 * How a request failed. A failed request is data: the kind goes in its record and the summary counts by kind.
 * - connect_refused / connect_reset / dns: the socket could not be opened, or was closed under us.
 * - http_status: the server answered with a non-2xx status (the record keeps the status and a body excerpt).
 * - timeout_ttft: no first token within the time-to-first-token timeout.
 * - timeout_idle: a stream went silent between chunks for longer than the idle timeout.
 * - timeout_total: the whole request took longer than --request-timeout-sec.
 * - malformed_stream: an SSE `data:` line or a JSON body that is not valid JSON, or an `error` event in the stream.
 * - truncated_stream: the stream ended without `data: [DONE]` (or a non-streaming body ended early).
 * - empty_answer: a 2xx reply that ended normally but carried no choice with any content, reasoning or tool call
 *   (e.g. only `choices: []` chunks, then [DONE]). A choice cut at its length limit (finish_reason "length") is not empty.
 * - aborted: the run stopped (signal, deadline) while the request was in flight.
 * - other: anything else (the message says what).
 */
export type ErrorKind =
  | 'connect_refused'
  | 'connect_reset'
  | 'dns'
  | 'http_status'
  | 'timeout_ttft'
  | 'timeout_idle'
  | 'timeout_total'
  | 'malformed_stream'
  | 'truncated_stream'
  | 'empty_answer'
  | 'aborted'
  | 'other';

/** A request's failure, as recorded. */
export interface RequestError {
  kind: ErrorKind;
  /** One line, human-readable. Never contains request headers. */
  message: string;
  /** HTTP status, for http_status (and for stream errors after a 200). */
  status?: number;
  /** At most 200 characters of the error body, for http_status. */
  bodyExcerpt?: string;
  /** The server's `Retry-After` (seconds or HTTP date) in milliseconds, for http_status when it sent one. */
  retryAfterMs?: number;
}

/** One chat completion request, as the engine asks the client to send it. */
export interface ChatRequest {
  /**
   * Called once, as the first token (content or reasoning) arrives, with its time (the record's first-token time): the
   * server has computed the prompt. Not sent.
   */
  onFirstToken?: (atMs: number) => void;
  /**
   * vLLM's `return_token_ids` (sent as that body field): the answer carries the prompt's token ids (a stream's first
   * chunk) and the generated ones (each chunk's `token_ids`): `StreamResult.outputTokenIds`. Called once with the
   * prompt's as they arrive. Not sent.
   */
  onPromptTokenIds?: (ids: number[]) => void;
  /**
   * Called as each attempt's response head arrives with the replica it names (ChatClientOptions.replicaHeaders), before
   * its first token: the expected-cache model's per-replica side needs it then. Without such a header, called once as
   * the body names its worker (NVIDIA Dynamo's `nvext.worker_id`, client/dynamo-worker.ts), before that chunk's first
   * token when it carries one. Not sent.
   */
  onReplica?: (replica: string) => void;
  returnTokenIds?: boolean;
  model: string;
  messages: readonly ChatMessage[];
  stream: boolean;
  maxTokens?: number;
  minTokens?: number;
  ignoreEos?: boolean;
  temperature?: number;
  seed?: number;
  /** The conversation's tool definitions (sent as `tools`). */
  tools?: readonly Record<string, unknown>[];
  /** Merged into the JSON body last (--extra-body). */
  extraBody?: Readonly<Record<string, unknown>>;
  /** With --send-conversation-id: sent as body `conversation_id` and header `X-Session-ID`. */
  conversationId?: string;
  /** /v1/completions: the prompt text, `messages` rendered by the run's chat template (the engine renders it). */
  prompt?: string;
  /**
   * /v1/responses with the server keeping state: the previous response's id, and how many of `messages` the server
   * already holds under it (the history up to and including that answer); only the rest is sent.
   */
  previousResponse?: { id: string; messagesHeld: number };
  /** /v1/responses: ask the server to keep this response (`store: true`) so the next turn can continue from it. */
  storeResponse?: boolean;
}

/** Token counts the server reported in `usage`. */
export interface ServerUsage {
  promptTokens: number;
  completionTokens: number;
  /** `prompt_tokens_details.cached_tokens`, when the server reports it. */
  cachedTokens?: number;
  /** `completion_tokens_details.reasoning_tokens`, when reported. */
  reasoningTokens?: number;
}

/**
 * What the client observed for one request: raw monotonic timestamps (milliseconds from `performance.now()`,
 * taken as each chunk arrives, before parsing work) and what came back. It derives no metrics: metrics/ does.
 * `content` and `reasoning` are getters (the text is joined once, when first read): JSON.stringify gives them, an
 * object spread does not.
 */
export interface StreamResult {
  /** Just before the request was handed to the socket. */
  sentAtMs: number;
  /** When the response headers arrived. */
  headersAtMs?: number;
  /** Arrival of the first chunk that carried content, reasoning text or a tool call (the TTFT point). */
  firstTokenAtMs?: number;
  firstContentAtMs?: number;
  firstReasoningAtMs?: number;
  /** Arrival of the first chunk with a `tool_calls` delta (the tool-call time, beside TTFT). */
  firstToolCallAtMs?: number;
  /** The answer's tool calls, assembled from the deltas (arguments concatenated in order). */
  toolCalls?: ToolCall[];
  /** Arrival time of every chunk that carried content, reasoning text or a tool-call delta, in order (first one included). */
  tokenChunkTimesMs: number[];
  /** When the response ended (DONE, end of body, or the error). */
  doneAtMs: number;
  content: string;
  reasoning: string;
  /**
   * The reasoning + content text of the first token-carrying chunk, so metrics can count the tokens of the first
   * chunk (the reference's `output_num_first_chunk_tokens`).
   */
  firstTokenChunkText?: string;
  /** Number of chunks that carried content, reasoning text or a tool-call delta. */
  numTokenChunks: number;
  usage?: ServerUsage;
  finishReason?: string;
  httpStatus?: number;
  /** From a `Retry-After` header (seconds or HTTP date), in milliseconds. */
  retryAfterMs?: number;
  /**
   * The replica that answered, from a replica header (client/replica-header.ts), else the worker the body named
   * (Dynamo's nvext.worker_id, client/dynamo-worker.ts): bounded and escaped server data.
   */
  replica?: string;
  /**
   * 1 when the first send died on a reused connection the server had closed, before any response byte, and this
   * result is the resend on a fresh connection (its sentAtMs is the resend's). Absent otherwise.
   */
  staleConnectionResends?: number;
  /** The Responses API's response id (`resp_…`), to continue from with previous_response_id. */
  responseId?: string;
  /** Usage fields the server sent that cannot be true, dropped (usage.ts acceptUsage). */
  invalidUsage?: string[];
  /** With `returnTokenIds`: the generated token ids the server returned, in order (undefined when it returned none). */
  outputTokenIds?: number[];
  error?: RequestError;
}
