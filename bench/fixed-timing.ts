// How precisely does chatload measure TTFT and TPOT? The precision check that test/load/run.test.ts made (median TTFT
// within ±5 ms of 50, median TPOT within ±1 ms of 10) failed under load (issue #16: 75 ms), so the test now asserts
// only lower bounds, and the precise figures live here. A fixed-timing server in its own process (first token 50 ms
// after the request, then one every 10 ms, 20 tokens) is measured two ways in the same run, in alternating rounds:
// the baseline, a bare undici.request that stamps each raw read with performance.now() and finds the token chunks by
// a byte search, and chatload's whole run (runBenchmark: engine, client, SSE reader, records). Prints the medians
// and the ratios chatload / baseline: near 1.00 means chatload adds nothing measurable; both minus the configured
// times is what the machine adds. chatload's TPOT is vllm bench serve's, (latency - TTFT) / (tokens - 1), with the
// latency to [DONE], which this server sends one interval after the last token: so its TPOT ratio sits near 20/19
// (1.053) by definition, and its TTFT ratio is the one that shows overhead.
// Usage: node --import tsx bench/fixed-timing.ts [requests=96] [clients=4] [rounds=3]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Table from 'cli-table3';
import { Agent, request } from 'undici';
import { runBenchmark } from '../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../src/store/requests-jsonl.js';
import { syntheticConversations } from '../test/helpers/datasets.js';
import { startFixedTimingProcess } from './fixed-timing-process.js';

const REQUESTS = Number(process.argv[2] ?? 96);
const CLIENTS = Number(process.argv[3] ?? 4);
const ROUNDS = Number(process.argv[4] ?? 3);
const TIMING = { ttftMs: 50, itlMs: 10, tokens: 20 };

interface Sample {
  ttftMs: number;
  tpotMs: number;
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The baseline: CLIENTS loops of bare requests, each read stamped as it arrives, token chunks counted by bytes. */
async function baseline(url: string): Promise<Sample[]> {
  const agent = new Agent({ connections: CLIENTS, pipelining: 1 });
  const body = JSON.stringify({ model: 'fixed-timing', messages: [{ role: 'user', content: 'hello' }], stream: true });
  const samples: Sample[] = [];
  let next = 0;
  const loop = async (): Promise<void> => {
    while (next < REQUESTS) {
      next += 1;
      const sentAt = performance.now();
      const response = await request(`${url}/v1/chat/completions`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
      const times: number[] = [];
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        const at = performance.now();
        // One stamp per token event in the read (the server writes one token per event).
        for (let i = chunk.indexOf('"content"'); i !== -1; i = chunk.indexOf('"content"', i + 1)) times.push(at);
      }
      if (times.length >= 2) samples.push({ ttftMs: times[0]! - sentAt, tpotMs: (times.at(-1)! - times[0]!) / (times.length - 1) });
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, loop));
  await agent.close();
  return samples;
}

/** chatload's whole run against the same server. */
async function chatload(url: string, dir: string): Promise<Sample[]> {
  const inputFile = join(dir, 'in.json');
  writeFileSync(inputFile, JSON.stringify(syntheticConversations({ count: REQUESTS, userTurns: () => 1 })));
  const result = await runBenchmark({ url, inputFile, numClients: CLIENTS, maxNumRequests: REQUESTS, outputDir: join(dir, `run-${Date.now()}`), report: false });
  return readRequestsJsonl(result.files.requests)
    .filter((r) => r.status === 'ok' && r.ttft_ms !== null && r.tpot_ms !== null)
    .map((r) => ({ ttftMs: r.ttft_ms!, tpotMs: r.tpot_ms! }));
}

const server = await startFixedTimingProcess(TIMING);
const dir = mkdtempSync(join(tmpdir(), 'chatload-bench-fixed-'));
const rows: string[][] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const base = await baseline(server.url);
    const ours = await chatload(server.url, dir);
    const b = { ttft: median(base.map((s) => s.ttftMs)), tpot: median(base.map((s) => s.tpotMs)) };
    const c = { ttft: median(ours.map((s) => s.ttftMs)), tpot: median(ours.map((s) => s.tpotMs)) };
    rows.push([
      String(round),
      `${b.ttft.toFixed(2)} / ${c.ttft.toFixed(2)}`,
      (c.ttft / b.ttft).toFixed(3),
      `${b.tpot.toFixed(3)} / ${c.tpot.toFixed(3)}`,
      (c.tpot / b.tpot).toFixed(3),
      `${(c.ttft - TIMING.ttftMs).toFixed(2)} / ${(c.tpot - TIMING.itlMs).toFixed(3)}`,
    ]);
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
const table = new Table({
  head: ['round', 'TTFT ms: baseline / chatload', 'ratio', 'TPOT ms: baseline / chatload', 'ratio', 'chatload - configured (TTFT / TPOT)'],
  style: { head: [], border: [] },
});
table.push(...rows);
console.log(`fixed-timing server: first token ${TIMING.ttftMs} ms, then one every ${TIMING.itlMs} ms, ${TIMING.tokens} tokens; ${REQUESTS} requests, ${CLIENTS} clients, medians`);
console.log(table.toString());
