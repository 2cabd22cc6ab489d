import { parentPort, workerData } from 'node:worker_threads';
import { ChatClient } from '../../client/chat-client.js';
import type { RequestRecord } from '../../metrics/record.js';
import { ClientHealthMonitor } from '../../metrics/client-health.js';
import { RunAggregate, runAggregateOptions } from '../../metrics/run-aggregate.js';
import { resolveTokenCounter } from '../../tokenizer/resolve.js';
import { runLoad } from '../run-load.js';
import { RequestBudget } from '../partition.js';
import { StopController, type StopReason } from '../stop.js';
import type { CoordinatorMessage, PartMessage, PartWorkerData } from './protocol.js';

/*
 * The entry of one part's worker thread (--workers): its own event loop and connection pool run the load over
 * the conversations this part owns. Records go to the coordinator in small batches (it writes requests.jsonl, so
 * the file stays one crash-safe sequence); stops travel both ways, so a stop anywhere stops every part.
 */

const data = workerData as PartWorkerData;
const port = parentPort!;
const post = (message: PartMessage): void => port.postMessage(message);

/**
 * Batches of records, with the sends and queue changes since the last batch (the live view's in-flight and queued
 * counts): flushed every BATCH_MS or at BATCH_SIZE records, whichever first, so posting costs little per request.
 */
const BATCH_MS = 50;
const BATCH_SIZE = 256;
let batch: RequestRecord[] = [];
let sent = 0;
let queued = 0;
let ended = { completed: 0, failed: 0, dropped: 0 };
let flushTimer: NodeJS.Timeout | undefined;
function flush(): void {
  clearTimeout(flushTimer);
  flushTimer = undefined;
  if (batch.length === 0 && sent === 0 && queued === 0 && ended.completed + ended.failed + ended.dropped === 0) return;
  post({ type: 'records', records: batch, sent, queued, ended });
  dieForTest(batch.length);
  batch = [];
  sent = 0;
  queued = 0;
  ended = { completed: 0, failed: 0, dropped: 0 };
}
/*
 * Fault injection for the tests of a dying part (issue #35): CHATLOAD_TEST_KILL_PART=P:N ends part P's thread
 * abruptly once it has posted N records, with requests still in flight, as a crash or an out-of-memory kill would.
 */
const killAt = process.env.CHATLOAD_TEST_KILL_PART?.split(':').map(Number);
let posted = 0;
function dieForTest(records: number): void {
  posted += records;
  if (killAt !== undefined && killAt[0] === data.index && posted >= (killAt[1] ?? 0)) process.exit(70);
}
function flushSoon(): void {
  flushTimer ??= setTimeout(flush, BATCH_MS);
}

const stop = new StopController();
let stopFromCoordinator = false;
let start: (message: Extract<CoordinatorMessage, { type: 'start' }>) => void = () => {};
const started = new Promise<Extract<CoordinatorMessage, { type: 'start' }>>((resolve) => {
  start = resolve;
});
port.on('message', (message: CoordinatorMessage) => {
  if (message.type === 'start') return start(message);
  stopFromCoordinator = true;
  if (message.abort) stop.abortInFlight(message.reason);
  else stop.stop(message.reason);
});
// A stop this part decides is everyone's stop (early stop, -n, --duration, the deadline), except `completed`: that
// only says this part has nothing left, while the others may still be working.
const forward = (abort: boolean) => (): void => {
  if (!stopFromCoordinator && stop.reason !== 'completed') post({ type: 'stop', reason: stop.reason as StopReason, abort });
};
stop.stopping.addEventListener('abort', forward(false), { once: true });
stop.abort.addEventListener('abort', forward(true), { once: true });

const client = new ChatClient(data.client);

try {
  post({ type: 'ready' });
  const { startEpochMs, expectedCacheIndexPort } = await started;
  const health = new ClientHealthMonitor();
  const aggregate = new RunAggregate(runAggregateOptions(data.summary));
  health.start();
  const result = await runLoad({
    load: data.load,
    request: data.request,
    deadlines: data.deadlines,
    keepFinishedConversations: data.keepFinishedConversations,
    expectedCache: data.expectedCache,
    expectedCacheIndexPort,
    conversations: data.conversations,
    datasetIndices: data.datasetIndices,
    resumePoints: data.resumePoints,
    client,
    model: data.model,
    // The same tokenizer as the coordinator resolved (its warnings were already said there).
    counter: await resolveTokenCounter({ ...data.tokenizer }),
    part: { index: data.index, count: data.count, budget: new RequestBudget(undefined, data.budgetBuffer), stop, startEpochMs, coordinated: true },
    observer: {
      onRecord: (record) => {
        aggregate.add(record);
        batch.push(record);
        if (batch.length >= BATCH_SIZE) flush();
        else flushSoon();
      },
      onSend: () => {
        sent += 1;
        flushSoon();
      },
      onQueued: (delta) => {
        queued += delta;
        flushSoon();
      },
      onWarning: (message) => post({ type: 'warning', message }),
      onConversationEnd: (outcome) => {
        ended[outcome] += 1;
        flushSoon();
      },
    },
  });
  flush();
  post({ type: 'done', result, health: health.stop(), aggregate: aggregate.toJSON() });
} catch (error) {
  flush();
  post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
} finally {
  await client.close();
  port.close();
}
