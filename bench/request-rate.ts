// Benchmark: does --request-rate achieve the rate asked for? chatload paces each client on an absolute Poisson
// schedule, so a request's own duration is absorbed. The baseline, measured in the same run against the same
// simulator, is the reference tool's pacing as REFERENCE.md describes it: after each request, sleep an exponential
// pause with mean 1/rate, ignoring how long the request took. Prints achieved / target for both.
// Usage: node --import tsx bench/request-rate.ts [clients=4] [rate_per_client=4] [seconds=8]
import Table from 'cli-table3';
import { runBenchmark } from '../src/benchmark/run-benchmark.js';
import { ChatClient } from '../src/client/chat-client.js';
import { demoConversations } from '../src/conversation/demo.js';
import { Rng } from '../src/util/rng.js';
import { startSimulatorWorker } from '../src/sim/index.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLIENTS = Number(process.argv[2] ?? 4);
const RATE = Number(process.argv[3] ?? 4);
const SECONDS = Number(process.argv[4] ?? 8);
const MAX_TOKENS = 64;

/** The baseline: a closed loop whose pause ignores the request's duration. Returns requests completed per second. */
async function referencePacing(url: string): Promise<number> {
  const client = new ChatClient({ baseUrl: url, connections: CLIENTS, requestTimeoutMs: 30_000 });
  const conversations = demoConversations({ conversations: CLIENTS });
  const endAt = performance.now() + SECONDS * 1000;
  let done = 0;
  const startedAt = performance.now();
  await Promise.all(
    conversations.map(async (conversation, id) => {
      const rng = Rng.derive(1, id);
      while (performance.now() < endAt) {
        const result = await client.send({ model: 'chatload-sim', messages: conversation.messages.slice(0, 2), stream: true, maxTokens: MAX_TOKENS });
        if (result.error === undefined) done += 1;
        await new Promise((resolve) => setTimeout(resolve, rng.exponential(1000 / RATE)));
      }
    }),
  );
  await client.close();
  return done / ((performance.now() - startedAt) / 1000);
}

const sim = await startSimulatorWorker({ profile: 'cpu-tiny' });
try {
  const baseline = await referencePacing(sim.url);
  const result = await runBenchmark({
    url: sim.url,
    numClients: CLIENTS,
    requestRate: RATE,
    durationSec: SECONDS,
    limitMaxTokens: MAX_TOKENS,
    limitMinTokens: MAX_TOKENS,
    earlyStop: false,
    outputDir: mkdtempSync(join(tmpdir(), 'chatload-bench-rate-')),
  });
  const target = CLIENTS * RATE;
  const achieved = result.summary.request_throughput;
  const table = new Table({ head: ['pacing', 'target req/s', 'achieved req/s', 'achieved / target'], style: { head: [], border: [] } });
  table.push(
    ['reference (pause ignores duration)', target.toFixed(2), baseline.toFixed(2), (baseline / target).toFixed(3)],
    ['chatload (absolute Poisson schedule)', target.toFixed(2), achieved.toFixed(2), (achieved / target).toFixed(3)],
  );
  console.log(`request-rate accuracy: ${CLIENTS} clients x ${RATE} req/s, ${SECONDS} s each, simulator cpu-tiny, max_tokens ${MAX_TOKENS}`);
  console.log(table.toString());
} finally {
  await sim.close();
}
