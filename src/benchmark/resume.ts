import type { Conversation } from '../conversation/types.js';
import { ActiveConversation } from '../load/active-conversation.js';
import type { ResumeAt } from '../load/types.js';
import { ConfigError } from '../errors/index.js';
import type { ConversationCounts } from '../metrics/conversation-counts.js';
import { ErrorTally } from '../metrics/error-tally.js';
import type { LoadPlan } from '../options/run-plan.js';
import { readResumeState } from '../store/resume-state.js';

/** What --resume gives the load and the summaries: the conversations left, where each starts, what was done. */
export interface ResumedRun {
  /** The conversations not finished, and their positions in the dataset. */
  conversations: Conversation[];
  datasetIndices: number[];
  /** Those that start mid-way, by dataset index. */
  resumePoints: Map<number, ResumeAt>;
  /** The -n budget left (undefined: no -n). */
  maxNumRequests: number | undefined;
  /** This run's records continue the interrupted run's clock: their times move by this (ms). */
  clockOffsetMs: number;
  /** Conversations the interrupted run finished (completed or failed). */
  completed: number;
  failed: number;
  /** The interrupted run's requests, ok and failed, and its stale-connection resends. */
  outcomes: ErrorTally;
  staleConnectionResends: number;
  /** Records already in requests.jsonl. */
  records: number;
}

/**
 * Plans the continuation of the interrupted run whose records are in `requestsFile`, before anything is sent: finished
 * conversations (every turn answered, or ended by a failure other than `aborted`) are skipped; the others start at
 * their first unanswered turn, with the dataset's recorded answers in the history. A one-line ConfigError (exit 2)
 * when the records do not match the dataset, or a turn to skip has no recorded answer to replay.
 */
export async function planResume(requestsFile: string, dataset: readonly Conversation[], load: LoadPlan): Promise<ResumedRun> {
  const outcomes = new ErrorTally();
  let staleConnectionResends = 0;
  const state = await readResumeState(requestsFile, (record) => {
    outcomes.add(record);
    staleConnectionResends += record.stale_connection_resends;
  });
  const resumed: ResumedRun = {
    conversations: [],
    datasetIndices: [],
    resumePoints: new Map(),
    maxNumRequests: load.maxNumRequests === undefined ? undefined : Math.max(0, load.maxNumRequests - state.budgetRecords),
    clockOffsetMs: state.clockEndMs,
    completed: 0,
    failed: 0,
    outcomes,
    staleConnectionResends,
    records: state.records,
  };
  for (const [index, point] of state.conversations) {
    if (dataset[index]?.id !== point.id) {
      throw new ConfigError(`--resume: ${requestsFile} does not match the dataset (conversation ${index} is ${JSON.stringify(dataset[index]?.id)} in the dataset, ${JSON.stringify(point.id)} in the records)`);
    }
  }
  dataset.forEach((conversation, index) => {
    const point = state.conversations.get(index);
    const active = new ActiveConversation(conversation, index, load.maxTurns);
    if (point?.ended === true) resumed.failed += 1;
    else if (point !== undefined && point.turnsDone >= active.turnCount) resumed.completed += 1;
    else {
      resumed.conversations.push(conversation);
      resumed.datasetIndices.push(index);
      if (point === undefined || point.turnsDone === 0) return;
      if (!active.canResumeAt(point.turnsDone)) {
        throw new ConfigError(`--resume: conversation ${index} (id ${JSON.stringify(point.id)}) has no recorded answer to replay for its first ${point.turnsDone === 1 ? 'turn' : `${point.turnsDone} turns`} (the server's answers are not kept on disk)`);
      }
      resumed.resumePoints.set(index, point);
    }
  });
  return resumed;
}

/** The conversation counts of the whole run: the resumed part's, plus what the interrupted run finished. */
export function resumedCounts(counts: ConversationCounts, resumed: ResumedRun | undefined): ConversationCounts {
  if (resumed === undefined) return { ...counts };
  return {
    ...counts,
    total: counts.total + resumed.completed + resumed.failed,
    completed: counts.completed + resumed.completed,
    failed: counts.failed + resumed.failed,
  };
}
