import type { MessagePort } from 'node:worker_threads';
import type { Conversation } from '../../conversation/types.js';
import type { ClientHealth } from '../../metrics/client-health.js';
import type { RequestRecord } from '../../metrics/record.js';
import type { ChatClientOptions } from '../../client/chat-client.js';
import type { SerializedRunAggregate } from '../../metrics/run-aggregate.js';
import type { SummaryPlan, TokenizerChoice } from '../../options/run-plan.js';
import type { StopReason } from '../stop.js';
import type { LoadInput, LoadResult, ResumeAt } from '../types.js';

/** What a part's worker thread needs to run its share of the load (its workerData). Plain, cloneable data. */
export interface PartWorkerData extends Pick<LoadInput, 'load' | 'request' | 'deadlines' | 'keepFinishedConversations' | 'expectedCache'> {
  /** This part's conversations only, and their positions in the dataset. */
  conversations: Conversation[];
  datasetIndices: number[];
  /** --resume: this part's conversations that start mid-way, by dataset index. */
  resumePoints?: Map<number, ResumeAt>;
  /** The options of this part's own ChatClient (every field is plain data). */
  client: ChatClientOptions;
  /** The model name sent in requests. */
  model: string;
  /** The tokenizer the coordinator resolved, resolved again here. */
  tokenizer: TokenizerChoice;
  /** What the part's RunAggregate summarizes by (--goodput, --warmup-percentages). */
  summary: Pick<SummaryPlan, 'goodput' | 'warmupPercentages'> & Partial<Pick<SummaryPlan, 'metricPercentiles'>>;
  /** Which part this worker runs. */
  index: number;
  count: number;
  /** The shared -n budget. */
  budgetBuffer: SharedArrayBuffer;
}

/** Messages from a part's worker to the coordinator. */
export type PartMessage =
  /** Loaded and waiting for 'start'. */
  | { type: 'ready' }
  /**
   * Records ended, and requests sent (`sent`) and sessions queued (`queued`, net) since the last: the live view's
   * counts. `ended`: conversations completed, failed and dropped since the last, so a part that dies leaves its counts behind.
   */
  | { type: 'records'; records: RequestRecord[]; sent: number; queued: number; ended: { completed: number; failed: number; dropped: number } }
  | { type: 'warning'; message: string }
  /** The part's load stopped for `reason`: every other part must stop too (soft, or hard when `abort`). */
  | { type: 'stop'; reason: StopReason; abort: boolean }
  /**
   * The part's result, its own event loop's health (a worker's delay is not seen from the main thread), and the
   * aggregate of its records, recorded in its thread as they came (the coordinator merges the parts').
   */
  | { type: 'done'; result: LoadResult; health: ClientHealth; aggregate: SerializedRunAggregate }
  | { type: 'failed'; message: string };

/** Messages from the coordinator to a part's worker. */
export type CoordinatorMessage =
  /**
   * Every part is ready: start at this epoch time (ms), the same for all. `expectedCacheIndexPort`: the part's channel
   * to the run's one expected-cache index (issue #31), transferred with the message.
   */
  | { type: 'start'; startEpochMs: number; expectedCacheIndexPort?: MessagePort }
  | { type: 'stop'; reason: StopReason; abort: boolean };
