import type { ChatMessage } from '../tokenizer/types.js';
import type { AgenticTraceFormat } from './agentic-traces/formats.js';

/**
 * Per-step settings (a step is one request: for plain chat, one user turn; with tool calls, also each answer to tool
 * results). Per-user-turn settings a dataset may carry beyond role and content. Generated datasets always set `maxTokens`;
 * `thinkTimeSec` when the config has a `think_time`. On disk they are extra fields of the messages
 * (`max_tokens` on the assistant message that answers the turn, `think_time_sec` on the user message); in memory
 * they live here, so `messages` stay plain `{ role, content }` and go to the server unchanged.
 */
export interface TurnSettings {
  /** The turn's `max_tokens` (tokens): the sampled output length of a generated answer. */
  maxTokens?: number;
  /** Seconds to wait after the previous answer before sending this user turn. */
  thinkTimeSec?: number;
}

/**
 * One conversation as the reference tool's files hold it: an id and its messages. An optional leading `system`
 * message is sent with every turn; after it, messages alternate user/assistant starting with user. The assistant
 * messages are recorded answers: they set each turn's `max_tokens`, and by default the server's real answer
 * replaces them in the history.
 */
export interface Conversation {
  id: string;
  messages: ChatMessage[];
  /**
   * Settings per step: `turns[k]` belongs to the k-th request (the k-th user message in a plain chat; with tool calls
   * also each group of tool results). Absent when the dataset has none.
   */
  turns?: TurnSettings[];
  /** OpenAI tool definitions, sent with every request of this conversation. */
  tools?: Record<string, unknown>[];
  /** On a sub-agent: the session it forked from (docs/DATASETS.md, "Sub-agent forks"). */
  parent?: ForkPoint;
  /** On a session: the sub-agents it spawns, in dataset order (nested at load; separate items on disk). */
  forks?: Conversation[];
  /**
   * A production trace's session (Mooncake, Bailian; docs/DATASETS.md): its turns' schedule, token lengths and KV
   * block hash ids. Its `messages` are then placeholders (empty user messages): the prompts are synthesised from the
   * hash ids when each turn is sent, so a trace of any size costs memory for its ids only.
   */
  trace?: TraceSession;
}

/**
 * Where a sub-agent forks from its parent: `at` is the index, in the parent's `messages`, of the assistant answer after
 * which the children start (in a trace session, whose messages are placeholders: the index of the trace turn). They share the parent's history before it (the prompt of that request), run
 * concurrently, and the parent's next request waits for all of them.
 */
export interface ForkPoint {
  id: string;
  at: number;
}

/** One request of a trace. */
export interface TraceTurn {
  /** When to send it, ms from the start of the replay (trace time, before --trace-speed); absent: `delayMs` after the previous answer. */
  atMs?: number;
  /** ms after the previous turn's answer (Mooncake `delay`); used when `atMs` is absent. */
  delayMs?: number;
  /** Prompt tokens the trace says the request had (Mooncake/Bailian `input_length`). */
  inputLength: number;
  /** Output tokens (`output_length`): sent as max_tokens. */
  outputLength: number;
  /** KV block hash ids of the prompt, `blockSize` tokens each, the last one possibly partial. */
  hashIds: number[];
  /** A pre-formatted prompt (Mooncake `messages`), sent as it is instead of synthesised text. */
  messages?: ChatMessage[];
  /** Tool definitions (Mooncake `tools`), sent as they are. */
  tools?: unknown[];
  /** An agentic trace's turn whose new input is the result of a tool call the previous answer made (counted, not sent as a tool message). */
  toolResult?: boolean;
}

/** A trace's session: its format, block size, how its turns' context is built, and its turns. */
export interface TraceSession {
  /** The trace's format: Mooncake, Bailian (hash ids as written), Azure, BurstGPT (CSV: fresh ids a request, no shared prefix), or an agentic trace. */
  format: 'mooncake' | 'bailian' | 'azure' | 'burstgpt' | AgenticTraceFormat;
  /** Tokens per hash block (--trace-block-size; 512 for Mooncake, 16 for Bailian by default). */
  blockSize: number;
  /**
   * `history`: each turn's prompt is appended to the session's history with the server's answers, as every chatload
   * conversation (Mooncake sessions). `self-contained`: each turn's prompt already holds its whole context and is
   * sent alone (Bailian rows, pre-formatted `messages`).
   */
  context: 'history' | 'self-contained';
  turns: TraceTurn[];
}

/** Counts of a dataset, for reports. */
export interface DatasetInfo {
  /** The file it came from, or `built-in demo`. */
  source: string;
  conversations: number;
  userTurns: number;
  messages: number;
}
