import type { Worker } from 'node:worker_threads';
import type { ChatClientOptions } from '../../client/chat-client.js';
import type { Conversation } from '../../conversation/types.js';
import { sumConversationCounts } from '../../metrics/conversation-counts.js';
import type { SerializedRunAggregate } from '../../metrics/run-aggregate.js';
import type { SummaryPlan, TokenizerChoice } from '../../options/run-plan.js';
import { startModuleWorker } from '../../util/module-worker.js';
import { finalStopReason, unfinishedWarning } from '../engine.js';
import { ownsConversation, RequestBudget } from '../partition.js';
import { StopController, type StopReason } from '../stop.js';
import type { EngineInput, EngineObserver, EngineResult } from '../types.js';
import type { CoordinatorMessage, PartMessage, PartWorkerData } from './protocol.js';
import { counted, wasWere } from '../../util/plural.js';

/** How long the parts get to load before the coordinator gives up on one (ms). */
const READY_TIMEOUT_MS = 60_000;
/** A little slack so every part is listening when the common start arrives (ms). */
const START_SLACK_MS = 20;

/** What the coordinator needs beyond the engine input: each worker's client options and tokenizer, and how many workers. */
export interface WorkersInput extends Omit<EngineInput, 'client' | 'part'> {
  /** The options each worker's own ChatClient is made with. */
  client: ChatClientOptions;
  tokenizer: TokenizerChoice;
  /** What each part's RunAggregate summarizes by (--goodput, --warmup-percentages). */
  summary: Pick<SummaryPlan, 'goodput' | 'warmupPercentages'> & Partial<Pick<SummaryPlan, 'metricPercentiles'>>;
  workers: number;
  /** This machine's shard of a multi-machine run (--shard I/N): the workers split the shard's share further. */
  shard?: { index: number; count: number };
  /** The -n budget of this process (the shard's share), undefined for none. */
  maxRequests: number | undefined;
  /** --start-at: epoch ms before which no part starts. */
  startAtEpochMs?: number;
  /**
   * Called once every part has ended, with each part's RunAggregate (of its records, as it recorded them) in part
   * order; undefined for a part that died, whose records reached the observer but whose aggregate is lost.
   */
  onAggregates?(parts: Array<SerializedRunAggregate | undefined>): void;
}

/**
 * --workers N: runs the engine as N parts, each in its own worker thread with its own event loop and connection
 * pool, and merges them into one result with the semantics of one loop: the -n budget is shared (exact), a stop in
 * any part (early stop, -n, --duration, the deadline) stops every part, and records arrive here in order of
 * completion, for the caller's observer (which writes requests.jsonl). A part that dies is recorded and the run
 * carries on; its conversations that had not finished are counted as failed.
 */
export async function runEngineInWorkers(input: WorkersInput): Promise<EngineResult> {
  const { observer = {} } = input;
  const count = input.workers;
  const budget = new RequestBudget(input.maxRequests);
  const stop = new StopController();
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    observer.onWarning?.(message);
  };
  const workers: Worker[] = [];
  const broadcast = (message: CoordinatorMessage): void => {
    for (const worker of workers) worker.postMessage(message);
  };
  const onStop = (abort: boolean) => (): void => broadcast({ type: 'stop', reason: (stop.reason ?? 'interrupted') as StopReason, abort });
  stop.stopping.addEventListener('abort', onStop(false), { once: true });
  stop.abort.addEventListener('abort', onStop(true), { once: true });
  const unfollow = stop.followSignal(input.signal, input.deadlines.stopGraceMs);
  const unfollowStop = stop.followStopSignal(input.stopSignal);
  const timers: NodeJS.Timeout[] = [];
  let ends: PartEnd[] = [];

  const base = input.shard ?? { index: 0, count: 1 };
  const owned = (index: number): number => input.conversations.filter((_c, i) => ownsConversation(i, base.index * count + index, base.count * count)).length;
  const ready: Promise<void>[] = [];
  const done: Promise<PartEnd>[] = [];
  for (let index = 0; index < count; index++) {
    // Each worker gets only the conversations it owns (the part of a shard: base.index * count + index).
    const part = base.index * count + index;
    const parts = base.count * count;
    const datasetIndices: number[] = [];
    const mine: Conversation[] = [];
    input.conversations.forEach((c, i) => {
      if (ownsConversation(i, part, parts)) {
        datasetIndices.push(input.datasetIndices?.[i] ?? i);
        mine.push(c);
      }
    });
    const data: PartWorkerData = {
      load: input.load,
      request: input.request,
      deadlines: input.deadlines,
      keepFinishedConversations: input.keepFinishedConversations,
      expectedCache: input.expectedCache,
      conversations: mine,
      datasetIndices,
      resumePoints: input.resumePoints === undefined ? undefined : new Map(datasetIndices.flatMap((d) => (input.resumePoints!.has(d) ? [[d, input.resumePoints!.get(d)!] as const] : []))),
      client: input.client,
      model: input.model,
      tokenizer: input.tokenizer,
      summary: input.summary,
      index: part,
      count: parts,
      budgetBuffer: budget.buffer,
    };
    const worker = startModuleWorker(import.meta.url, 'part-worker', data);
    workers.push(worker);
    let markReady: () => void = () => {};
    ready.push(new Promise<void>((resolve) => (markReady = resolve)));
    done.push(followPart(worker, index, { observer, stop, warn, markReady }));
  }

  try {
    const readyTimer = new Promise<void>((resolve) => timers.push(setTimeout(resolve, READY_TIMEOUT_MS)));
    await Promise.race([Promise.all(ready), readyTimer]);
    const startEpochMs = Math.max(input.startAtEpochMs ?? 0, performance.timeOrigin + performance.now() + START_SLACK_MS);
    broadcast({ type: 'start', startEpochMs });
    // A stop that came before the workers were listening (e.g. a signal during start-up) reaches them now.
    if (stop.stopping.aborted) broadcast({ type: 'stop', reason: stop.reason ?? 'interrupted', abort: stop.abort.aborted });
    ends = await Promise.all(done);
  } finally {
    for (const timer of timers) clearTimeout(timer);
    unfollow();
    unfollowStop();
    await Promise.all(workers.map((w) => w.terminate()));
  }

  const results = ends.map((end) => end.done?.result);
  // A part that died is counted from what it said: the conversations it saw complete, and the rest as failed.
  const parts = ends.map(({ done, said }, index) => done?.result.conversations ?? { total: owned(index), completed: said.completed, failed: owned(index) - said.completed, unfinished: 0, not_started: 0 });
  const counts = sumConversationCounts(parts)!;
  input.onAggregates?.(ends.map((end) => end.done?.aggregate));
  const finished = results.flatMap((r) => r?.finishedConversations ?? []);
  if (budget.spent) stop.stop('max_requests');
  else stop.stop('completed');
  const stopReason = finalStopReason(stop.reason, counts);
  const unfinished = unfinishedWarning(counts, stopReason);
  if (unfinished !== undefined) warn(unfinished);
  const first = results.find((r) => r !== undefined);
  return {
    stopReason,
    loadModel: `${first?.loadModel ?? 'unknown'} (per worker; ${count} worker threads)`,
    conversations: counts,
    finishedConversations: finished,
    runStartMs: first?.runStartMs ?? 0,
    runEndMs: performance.now(),
    requestsSent: budget.taken,
    warmupRequestsSent: results.reduce((n, r) => n + (r?.warmupRequestsSent ?? 0), 0),
    crashedTasks: ends.filter((end) => end.done === undefined).length + results.reduce((n, r) => n + (r?.crashedTasks ?? 0), 0),
    answerMismatches: results.reduce((n, r) => n + (r?.answerMismatches ?? 0), 0),
    warnings: [...warnings],
    workerHealth: ends.map((end) => end.done?.health ?? null),
  };
}

/** What a part said as it went: what it leaves behind if it dies (its conversations' ends, its requests in flight). */
interface PartSaid {
  completed: number;
  failed: number;
  inFlight: number;
}

/** How a part ended: its `done` message, or undefined when it died; and what it had said. */
interface PartEnd {
  done: Extract<PartMessage, { type: 'done' }> | undefined;
  said: PartSaid;
}

/**
 * Follows one part's worker to its end: its records and counts to the observer, its stops to every part, its warnings
 * to the run. A part that dies (an error, an exit, a `failed` message) is warned of once, and ends without `done`.
 */
function followPart(
  worker: Worker,
  index: number,
  run: { observer: EngineObserver; stop: StopController; warn: (message: string) => void; markReady: () => void },
): Promise<PartEnd> {
  const { observer, stop, warn } = run;
  const said: PartSaid = { completed: 0, failed: 0, inFlight: 0 };
  return new Promise((resolve) => {
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      const lost = said.inFlight > 0 ? `; ${counted(said.inFlight, 'request')} in flight ${wasWere(said.inFlight)} lost with it` : '';
      warn(`worker ${index} failed (${why}); its conversations that had not ended are counted as failed${lost}, and the other workers carried on`);
      run.markReady();
      resolve({ done: undefined, said });
    };
    worker.on('message', (message: PartMessage) => {
      switch (message.type) {
        case 'ready':
          return run.markReady();
        case 'records':
          said.completed += message.ended.completed;
          said.failed += message.ended.failed;
          said.inFlight += message.sent - message.records.length;
          // Sends first: a request's send came before its record.
          for (let i = 0; i < message.sent; i++) observer.onSend?.();
          for (let i = 0; i < Math.abs(message.queued); i++) observer.onQueued?.(message.queued > 0 ? 1 : -1);
          for (const record of message.records) observer.onRecord?.(record);
          return;
        case 'warning':
          return warn(`worker ${index}: ${message.message}`);
        case 'stop':
          return message.abort ? stop.abortInFlight(message.reason) : stop.stop(message.reason);
        case 'done':
          settled = true;
          return resolve({ done: message, said });
        case 'failed':
          return fail(message.message);
      }
    });
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
  });
}
