import type { MessagePort } from 'node:worker_threads';
import type { ExpectedCacheConfig } from '../cache-model/expected-cache.js';
import type { ChatClient } from '../client/chat-client.js';
import type { ClientHealth } from '../metrics/client-health.js';
import type { ConversationCounts } from '../metrics/conversation-counts.js';
import type { Conversation } from '../conversation/types.js';
import type { RequestRecord } from '../metrics/record.js';
import type { DeadlinesPlan, LoadPlan, RequestPlan } from '../options/run-plan.js';
import type { TokenCounter } from '../tokenizer/index.js';
import type { RequestBudget } from './partition.js';
import type { StopController, StopReason } from './stop.js';

/**
 * What the load tells the outside world. The load never prints or writes files: the CLI and the
 * benchmark runner subscribe (JSONL sink, progress line, --print-content).
 */
export interface LoadObserver {
  /** Every request's final record (warmup ones included, flagged), as soon as it ends. */
  onRecord?(record: RequestRecord): void;
  /** A run-level warning, said once. */
  onWarning?(message: string): void;
  /** With --print-content: the user message sent and the answer received. */
  onContent?(event: { conversationId: string; turn: number; user: string; answer: string }): void;
  /** Phase changes: warmup, benchmark, stopping (with the reason). */
  onPhase?(phase: 'warmup' | 'benchmark' | 'stopping', detail?: string): void;
  /** A turn's request is about to be sent (once per turn, retries not counted): with onRecord, the live in-flight count. */
  onSend?(): void;
  /** A session starts (+1) or stops (-1) waiting for a --max-concurrency slot: the live queued count. */
  onQueued?(delta: 1 | -1): void;
  /** A conversation ended (warmup ones included): how. A worker thread reports these, so its counts outlive it. */
  onConversationEnd?(outcome: ConversationOutcome): void;
}

/** How a conversation ended: every turn answered, or a failed request. */
export type ConversationOutcome = 'completed' | 'failed' | 'dropped';

/** The deadlines the load keeps (the per-request ones are the client's). */
export type LoadDeadlines = Pick<DeadlinesPlan, 'benchmarkMs' | 'durationMs' | 'stopGraceMs'>;

/** What the load needs to run: its parts of the run plan, the dataset, a client, the model name, a token counter. */
export interface LoadInput {
  /** The load model, the -n budget, warmup and seed. */
  load: LoadPlan;
  /** The request template: what every request carries, retries, and which answer goes into the history. */
  request: RequestPlan;
  deadlines: LoadDeadlines;
  /** Keep finished conversations with their answers (for -o); otherwise each is let go as it ends. */
  keepFinishedConversations: boolean;
  conversations: readonly Conversation[];
  /**
   * When `conversations` is already this part's share (a worker thread gets only its own, to save memory): their
   * positions in the whole dataset. Otherwise the load takes its part's share of `conversations` itself.
   */
  datasetIndices?: readonly number[];
  /** --resume: by dataset index, conversations that start mid-way, after the turns an interrupted run answered. */
  resumePoints?: ReadonlyMap<number, ResumeAt>;
  client: ChatClient;
  /** The model name sent in requests. */
  model: string;
  counter: TokenCounter;
  /** The expected-cache model's block size and capacity. @default 16-token blocks, infinite */
  expectedCache?: ExpectedCacheConfig;
  /**
   * A worker thread's channel to the run's one expected-cache index, which the coordinator owns (issue #31): this
   * load's ExpectedCache sends its index events there (cache-model/index-transport.ts) instead of keeping an index.
   */
  expectedCacheIndexPort?: MessagePort;
  observer?: LoadObserver;
  /** Aborting it stops the run gracefully (as SIGINT does): no new turns, in-flight requests get a grace period. */
  signal?: AbortSignal;
  /**
   * Aborting it is a soft stop for a reason of the caller's, its abort reason (a StopReason, e.g. 'output_error'):
   * no new turns; in-flight requests finish, bounded by their own timeouts.
   */
  stopSignal?: AbortSignal;
  /** When this load runs one part of a larger run (a worker thread, or a shard): which part, and what it shares. */
  part?: LoadPart;
}

/**
 * One part of a run split across worker threads or machines. The part owns the conversations whose index is
 * congruent to `index` modulo `count`, and its share of clients, active conversations and session rate.
 */
export interface LoadPart {
  index: number;
  count: number;
  /** The -n budget, shared by every part in this process (worker threads) or this part's own share (shards). */
  budget: RequestBudget;
  /** Driven by the coordinator too: a stop anywhere stops every part. */
  stop: StopController;
  /** Epoch ms at which the measured phase starts, the same for every part, so their record times line up. */
  startEpochMs?: number;
  /** True when a coordinator merges this part's results (worker threads): the part leaves run-level warnings to it. */
  coordinated: boolean;
}

/** How the dataset's conversations ended (defined beside sumConversationCounts, which sums parts' counts). */
export type { ConversationCounts } from '../metrics/conversation-counts.js';

/** The load's result: why it stopped, how every conversation ended, and the replayed conversations. */
export interface LoadResult {
  stopReason: StopReason;
  /** One line describing the load model that ran. */
  loadModel: string;
  conversations: ConversationCounts;
  /** Completed conversations with the answers used, for -o/--output-file. */
  finishedConversations: Conversation[];
  /** performance.now() at the start of the measured phase and at the end of the run. */
  runStartMs: number;
  runEndMs: number;
  /** Requests sent (final attempts), measured phase only, and in warmup. */
  requestsSent: number;
  warmupRequestsSent: number;
  /** Client or session tasks that died of a bug: each was recorded and the run carried on. */
  crashedTasks: number;
  /** --verify-output mismatches between the server's answers and the dataset's. */
  answerMismatches: number;
  warnings: string[];
  /** With --workers: each worker thread's own event-loop delay and CPU (null for a worker that failed). */
  workerHealth?: Array<ClientHealth | null>;
}

/** Where a resumed conversation starts: after `turnsDone` turns, whose last had these token counts. */
export interface ResumeAt {
  readonly turnsDone: number;
  readonly lastInputTokens: number;
  readonly lastOutputTokens: number;
}
