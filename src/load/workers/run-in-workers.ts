import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { IndexOwner } from '../../cache-model/index-owner.js';
import type { ChatClientOptions } from '../../client/chat-client.js';
import type { Conversation } from '../../conversation/types.js';
import { sumConversationCounts } from '../../metrics/conversation-counts.js';
import type { SerializedRunAggregate } from '../../metrics/run-aggregate.js';
import type { SummaryPlan, TokenizerChoice } from '../../options/run-plan.js';
import { startModuleWorker } from '../../util/module-worker.js';
import { countWarnings, finalStopReason } from '../run-load.js';
import { ownsConversation, RequestBudget } from '../partition.js';
import { StopController, type StopReason } from '../stop.js';
import type { ConversationCounts, LoadInput, LoadObserver, LoadResult } from '../types.js';
import type { CoordinatorMessage, PartMessage, PartWorkerData } from './protocol.js';
import { counted, wasWere } from '../../util/plural.js';

/** How long the parts get to load before the coordinator gives up on one (ms). */
const READY_TIMEOUT_MS = 60_000;
/** A little slack so every part is listening when the common start arrives (ms). */
const START_SLACK_MS = 20;

/** What the coordinator needs beyond the load's input: each worker's client options and tokenizer, and how many workers. */
export interface WorkersInput extends Omit<LoadInput, 'client' | 'part'> {
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
 * --workers N: runs the load as N parts, each in its own worker thread with its own event loop and connection
 * pool, and merges them into one result with the semantics of one loop: the -n budget is shared (exact), a stop in
 * any part (early stop, -n, --duration, the deadline) stops every part, and records arrive here in order of
 * completion, for the caller's observer (which writes requests.jsonl). A part that dies is recorded and the run
 * carries on; its conversations that had not finished are counted as failed.
 */
export async function runLoadInWorkers(input: WorkersInput): Promise<LoadResult> {
  const run = startCoordinator(input);
  const unfollow = run.stop.followSignal(input.signal, input.deadlines.stopGraceMs);
  const unfollowStop = run.stop.followStopSignal(input.stopSignal);
  const timers: NodeJS.Timeout[] = [];
  let ends: PartEnd[] = [];
  const { ready, done } = startParts(input, run);

  try {
    await startTogether(input, run, ready, timers);
    ends = await Promise.all(done);
  } finally {
    for (const timer of timers) clearTimeout(timer);
    unfollow();
    unfollowStop();
    await Promise.all(run.workers.map((w) => w.terminate()));
    run.cacheIndex.close();
  }
  return mergeParts(input, run, ends);
}

/** What the coordinator's steps share: the caller's observer, the run's -n budget and stop, its warnings, its workers. */
interface Coordinator {
  readonly observer: LoadObserver;
  readonly budget: RequestBudget;
  readonly stop: StopController;
  readonly warnings: string[];
  readonly warn: (message: string) => void;
  /** The parts' workers, in part order, as they start. */
  readonly workers: Worker[];
  /** Sends a message to every worker started so far. */
  readonly broadcast: (message: CoordinatorMessage) => void;
  /** The run's one expected-cache index, fed by every part (issue #31). */
  readonly cacheIndex: IndexOwner;
}

/** The coordinator, before any worker starts: its stop (and its abort of in-flight requests) reaches every worker. */
function startCoordinator(input: WorkersInput): Coordinator {
  const { observer = {} } = input;
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
  const cacheIndex = new IndexOwner(input.expectedCache ?? { blockSize: 16 });
  return { observer, budget: new RequestBudget(input.maxRequests), stop, warnings, warn, workers, broadcast, cacheIndex };
}

/** Worker `index`'s part of the run: a shard's workers split the shard's share further (base.index * workers + index). */
function partOf(input: WorkersInput, index: number): { index: number; count: number } {
  const base = input.shard ?? { index: 0, count: 1 };
  return { index: base.index * input.workers + index, count: base.count * input.workers };
}

/** The conversations a part owns, in dataset order, with their positions in the whole dataset. */
function partConversations(input: WorkersInput, part: { index: number; count: number }): { conversations: Conversation[]; datasetIndices: number[] } {
  const datasetIndices: number[] = [];
  const conversations: Conversation[] = [];
  input.conversations.forEach((c, i) => {
    if (ownsConversation(i, part.index, part.count)) {
      datasetIndices.push(input.datasetIndices?.[i] ?? i);
      conversations.push(c);
    }
  });
  return { conversations, datasetIndices };
}

/** What a part's worker is started with: the load's input for its own conversations only, and the shared -n budget. */
function partWorkerData(input: WorkersInput, part: { index: number; count: number }, budget: RequestBudget): PartWorkerData {
  const { conversations, datasetIndices } = partConversations(input, part);
  return {
    load: input.load,
    request: input.request,
    deadlines: input.deadlines,
    keepFinishedConversations: input.keepFinishedConversations,
    expectedCache: input.expectedCache,
    conversations,
    datasetIndices,
    resumePoints: input.resumePoints === undefined ? undefined : new Map(datasetIndices.flatMap((d) => (input.resumePoints!.has(d) ? [[d, input.resumePoints!.get(d)!] as const] : []))),
    client: input.client,
    model: input.model,
    tokenizer: input.tokenizer,
    summary: input.summary,
    index: part.index,
    count: part.count,
    budgetBuffer: budget.buffer,
  };
}

/** Starts every part's worker, followed to its end: for each part, when it is ready (or dead) and how it ended. */
function startParts(input: WorkersInput, run: Coordinator): { ready: Promise<void>[]; done: Promise<PartEnd>[] } {
  const ready: Promise<void>[] = [];
  const done: Promise<PartEnd>[] = [];
  for (let index = 0; index < input.workers; index++) {
    // Each worker gets only the conversations its part owns (partOf: the part of a shard), not the whole dataset.
    const worker = startModuleWorker(import.meta.url, 'part-worker', partWorkerData(input, partOf(input, index), run.budget));
    run.workers.push(worker);
    let markReady: () => void = () => {};
    ready.push(new Promise<void>((resolve) => (markReady = resolve)));
    const ended = followPart(worker, index, { observer: run.observer, stop: run.stop, warn: run.warn, markReady });
    // A part that died leaves its requests in flight in the index: they end there with nothing more cached.
    done.push(ended.then((end) => (end.done === undefined && run.cacheIndex.drop(index), end)));
  }
  return { ready, done };
}

/**
 * Waits for every part to be ready (at most READY_TIMEOUT_MS; its timer joins `timers`), then sends them all one
 * common start, not before --start-at.
 */
async function startTogether(input: WorkersInput, run: Coordinator, ready: Promise<void>[], timers: NodeJS.Timeout[]): Promise<void> {
  const readyTimer = new Promise<void>((resolve) => timers.push(setTimeout(resolve, READY_TIMEOUT_MS)));
  await Promise.race([Promise.all(ready), readyTimer]);
  const startEpochMs = Math.max(input.startAtEpochMs ?? 0, performance.timeOrigin + performance.now() + START_SLACK_MS);
  run.workers.forEach((worker, index) => {
    // Each part's own channel to the run's expected-cache index, its end transferred with the start.
    const { port1, port2 }: { port1: MessagePort; port2: MessagePort } = new MessageChannel();
    run.cacheIndex.attach(index, port1);
    const start: CoordinatorMessage = { type: 'start', startEpochMs, expectedCacheIndexPort: port2 };
    worker.postMessage(start, [port2]);
  });
  // A stop that came before the workers were listening (e.g. a signal during start-up) reaches them now.
  if (run.stop.stopping.aborted) run.broadcast({ type: 'stop', reason: run.stop.reason ?? 'interrupted', abort: run.stop.abort.aborted });
}

/** Merges the parts' ends into the run's result, as one loop would have it; hands their aggregates to the caller. */
function mergeParts(input: WorkersInput, run: Coordinator, ends: PartEnd[]): LoadResult {
  const { budget, stop } = run;
  const owned = (index: number): number => partConversations(input, partOf(input, index)).conversations.length;
  const results = ends.map((end) => end.done?.result);
  // A part that died is counted from what it said: the conversations it saw complete or dropped, the rest as failed.
  const parts = ends.map(({ done, said }, index) => done?.result.conversations ?? diedPartCounts(owned(index), said));
  const counts = sumConversationCounts(parts)!;
  input.onAggregates?.(ends.map((end) => end.done?.aggregate));
  const finished = results.flatMap((r) => r?.finishedConversations ?? []);
  if (budget.spent) stop.stop('max_requests');
  else stop.stop('completed');
  const stopReason = finalStopReason(stop.reason, counts);
  for (const warning of countWarnings(counts, stopReason)) run.warn(warning);
  const first = results.find((r) => r !== undefined);
  return {
    stopReason,
    loadModel: `${first?.loadModel ?? 'unknown'} (per worker; ${input.workers} worker threads)`,
    conversations: counts,
    finishedConversations: finished,
    runStartMs: first?.runStartMs ?? 0,
    runEndMs: performance.now(),
    requestsSent: budget.taken,
    warmupRequestsSent: results.reduce((n, r) => n + (r?.warmupRequestsSent ?? 0), 0),
    crashedTasks: ends.filter((end) => end.done === undefined).length + results.reduce((n, r) => n + (r?.crashedTasks ?? 0), 0),
    answerMismatches: results.reduce((n, r) => n + (r?.answerMismatches ?? 0), 0),
    warnings: [...run.warnings],
    workerHealth: ends.map((end) => end.done?.health ?? null),
  };
}

/** What a part said as it went: what it leaves behind if it dies (its conversations' ends, its requests in flight). */
interface PartSaid {
  completed: number;
  dropped: number;
  inFlight: number;
}

/** The counts of a part that died: what it said ended as it went, and every other conversation of its own as failed. */
function diedPartCounts(total: number, said: PartSaid): ConversationCounts {
  return { total, completed: said.completed, failed: total - said.completed - said.dropped, dropped: said.dropped, unfinished: 0, not_started: 0 };
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
  run: { observer: LoadObserver; stop: StopController; warn: (message: string) => void; markReady: () => void },
): Promise<PartEnd> {
  const { observer, stop, warn } = run;
  const said: PartSaid = { completed: 0, dropped: 0, inFlight: 0 };
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
          said.dropped += message.ended.dropped;
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
