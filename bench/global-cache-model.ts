// Benchmark: what one global expected-cache model costs per request with --workers 2 (issue #31), against each worker
// keeping its own index (the per-worker model it replaced), in the same run.
// Workload: 2 worker threads, each driving ExpectedCache over CONVERSATIONS conversations x TURNS user turns as the
// engine does (begin, first token, settled, account, end), CONCURRENT conversations at a time as async tasks; a
// 500-token system prompt shared by all, ~60-token user messages and answers (approximate tokenizer, ChatML).
//   - global: each worker's ExpectedCache sends its index events to the IndexOwner of the main thread
//     (cache-model/index-transport.ts, index-owner.ts);
//   - per-worker: each worker's ExpectedCache keeps its own index (no messages).
// Figures: CPU µs per request (process.cpuUsage: every thread of the process, the owner's included), cross-thread
// messages per request (both ways), and the expected hit ratio; the ratio global / per-worker of CPU per request.
// Rounds alternate the two modes (ROUNDS each) so that machine noise hits both alike; medians are shown.
// Usage: node --import tsx bench/global-cache-model.ts [conversations per worker=1000] [turns=10] [rounds=3] [concurrent=64]
import { MessageChannel, isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import Table from 'cli-table3';
import { ExpectedCache } from '../src/cache-model/expected-cache.js';
import { IndexOwner } from '../src/cache-model/index-owner.js';
import { RemoteIndexDriver } from '../src/cache-model/index-transport.js';
import { defaultTokenCounter, type ChatMessage } from '../src/tokenizer/index.js';
import { startModuleWorker } from '../src/util/module-worker.js';

// A worker thread's process.argv is not its parent's: the sizes go to the workers in workerData.
const argv = isMainThread ? process.argv.slice(2) : (workerData as { argv: string[] }).argv;
const CONVERSATIONS = Number(argv[0] ?? 1000);
const TURNS = Number(argv[1] ?? 10);
const ROUNDS = Number(argv[2] ?? 3);
const CONCURRENT = Number(argv[3] ?? 64);
const WORKERS = 2;
const CONFIG = { blockSize: 16 };

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'river', 'stone', 'cloud', 'maple', 'orbit', 'lantern', 'copper', 'meadow', 'quartz', 'willow'];
/** ~2 tokens a word under the approximate tokenizer; seeded by (a, b) so every text differs. */
function text(words: number, a: number, b: number): string {
  const out: string[] = [`${a}-${b}`];
  for (let i = 0; i < words; i++) out.push(WORDS[(i * 7 + a * 13 + b * 5 + ((i * (a + b)) % 11)) % WORDS.length]!);
  return out.join(' ');
}

interface WorkerInput {
  part: number;
  port: MessagePort | undefined;
}
interface WorkerOutput {
  requests: number;
  cached: number;
  prompt: number;
  posted: number;
}

/** One worker's load: its conversations, CONCURRENT at a time, each turn as the engine drives the model. */
async function workerLoad(input: WorkerInput): Promise<WorkerOutput> {
  const tokenizer = defaultTokenCounter.tokenizer;
  const driver = input.port === undefined ? undefined : new RemoteIndexDriver(input.port, CONFIG);
  const model = new ExpectedCache(defaultTokenCounter, CONFIG, undefined, driver);
  const system = text(250, 0, 0);
  const out: WorkerOutput = { requests: 0, cached: 0, prompt: 0, posted: 0 };
  let next = 0;
  const conversation = async (id: number): Promise<void> => {
    const key = {};
    let history: ChatMessage[] = [{ role: 'system', content: system }];
    for (let turn = 0; turn < TURNS; turn++) {
      const messages = [...history, { role: 'user' as const, content: text(30, id, turn) }];
      const answer = text(30, id + 1_000_000, turn);
      const ticket = await model.begin(key, messages, 64);
      // The server's time: a first token a little later, the answer after it.
      await new Promise((resolve) => setImmediate(resolve));
      model.prefilled(ticket, performance.now());
      await new Promise((resolve) => setImmediate(resolve));
      await model.settled(ticket);
      model.account(ticket, ticket.hit.expected);
      out.cached += ticket.hit.expected;
      out.prompt += ticket.promptLength;
      out.requests++;
      await model.end(ticket, tokenizer.encode(answer));
      history = [...messages, { role: 'assistant', content: answer }];
    }
  };
  const task = async (): Promise<void> => {
    while (next < CONVERSATIONS) await conversation(input.part * CONVERSATIONS + next++);
  };
  await Promise.all(Array.from({ length: CONCURRENT }, task));
  out.posted = driver?.posted ?? 0;
  await model.close();
  return out;
}

interface Measure {
  cpuUsPerRequest: number;
  messagesPerRequest: number;
  hitRatio: number;
  wallS: number;
}

/** One round: WORKERS threads, with one owner (global) or none (per-worker). */
async function round(global: boolean): Promise<Measure> {
  const owner = global ? new IndexOwner(CONFIG) : undefined;
  // Measured from when every worker has loaded (their module compilation is no part of the model's cost).
  let go: () => void = () => {};
  const started = new Promise<void>((resolve) => (go = resolve));
  const ready: Promise<void>[] = [];
  const outputs = Promise.all(
    Array.from({ length: WORKERS }, (_, part) => {
      let port: MessagePort | undefined;
      if (owner !== undefined) {
        const channel = new MessageChannel();
        owner.attach(part, channel.port1);
        port = channel.port2;
      }
      const worker = startModuleWorker(import.meta.url, 'global-cache-model', { part, argv });
      worker.postMessage({ part, port }, port === undefined ? [] : [port]);
      ready.push(new Promise<void>((resolve) => worker.once('message', () => resolve())));
      void started.then(() => worker.postMessage('go'));
      return new Promise<WorkerOutput>((resolve, reject) => {
        void started.then(() => worker.once('message', (o: WorkerOutput) => void worker.terminate().then(() => resolve(o))));
        worker.once('error', reject);
      });
    }),
  );
  await Promise.all(ready);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  go();
  const done = await outputs;
  const cpu = process.cpuUsage(cpu0);
  const wallS = (performance.now() - t0) / 1000;
  owner?.close();
  const requests = done.reduce((n, o) => n + o.requests, 0);
  const messages = done.reduce((n, o) => n + o.posted, 0) + (owner?.sent ?? 0);
  return {
    cpuUsPerRequest: (cpu.user + cpu.system) / requests,
    messagesPerRequest: messages / requests,
    hitRatio: done.reduce((n, o) => n + o.cached, 0) / done.reduce((n, o) => n + o.prompt, 0),
    wallS,
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (!isMainThread) {
  parentPort!.once('message', (input: WorkerInput) => {
    parentPort!.postMessage('ready');
    parentPort!.once('message', () => void workerLoad(input).then((o) => parentPort!.postMessage(o)));
  });
} else {
  const results: Record<'global' | 'per-worker', Measure[]> = { global: [], 'per-worker': [] };
  for (let r = 0; r < ROUNDS; r++) {
    results['per-worker'].push(await round(false));
    results.global.push(await round(true));
  }
  const table = new Table({ head: ['--workers 2', 'CPU µs / request', 'messages / request', 'expected hit ratio', 'wall s'], style: { head: [], border: [] } });
  for (const mode of ['per-worker', 'global'] as const) {
    const m = results[mode];
    table.push([mode, median(m.map((x) => x.cpuUsPerRequest)).toFixed(1), median(m.map((x) => x.messagesPerRequest)).toFixed(3), `${(100 * median(m.map((x) => x.hitRatio))).toFixed(2)}%`, median(m.map((x) => x.wallS)).toFixed(2)]);
  }
  const ratio = median(results.global.map((g, i) => g.cpuUsPerRequest / results['per-worker'][i]!.cpuUsPerRequest));
  console.log(`${WORKERS} workers x ${CONVERSATIONS} conversations x ${TURNS} turns, ${CONCURRENT} at a time per worker; ${ROUNDS} rounds each, alternating`);
  console.log(table.toString());
  console.log(`CPU per request, global / per-worker (median of the rounds' ratios): ${ratio.toFixed(2)}x`);
}
