// Does serving --metrics-port cost timing fidelity (issue #32, part 3)? The fixed-timing server of bench/fixed-timing.ts
// (its own process: first token 50 ms after the request, then one every 10 ms, 20 tokens) is measured by chatload's
// whole run twice per round, in alternating order: without --metrics-port, and with it while a scraper in another
// process (as Prometheus would be) GETs /metrics every 100 ms. Prints the medians of TTFT and TPOT, the ratio
// with / without (near 1.000: serving the metrics costs nothing measurable), the pages scraped, and the client's
// event-loop delay p99 of each run (results.json client_health).
// Usage: node --import tsx bench/metrics-port.ts [requests=192] [clients=8] [rounds=3]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Table from 'cli-table3';
import { runBenchmark } from '../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../src/store/requests-jsonl.js';
import { syntheticConversations } from '../test/helpers/datasets.js';
import { startFixedTimingProcess } from './fixed-timing-process.js';

const REQUESTS = Number(process.argv[2] ?? 192);
const CLIENTS = Number(process.argv[3] ?? 8);
const ROUNDS = Number(process.argv[4] ?? 3);
const TIMING = { ttftMs: 50, itlMs: 10, tokens: 20 };

/** A scraper in its own process: GETs `url` every 100 ms (keep-alive) until killed, then prints how many it got. */
const SCRAPER = `
let pages = 0;
const url = process.argv[1];
const tick = async () => { try { const r = await fetch(url); await r.text(); if (r.ok) pages++; } catch {} };
const timer = setInterval(tick, 100);
process.on('SIGTERM', () => { clearInterval(timer); console.log(pages); process.exit(0); });
`;

interface Measured {
  ttftMs: number;
  tpotMs: number;
  loopP99Ms: number;
  pages: number;
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Kills the scraper and reads how many pages it got. */
function stopScraper(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', () => resolve(Number(out.trim()) || 0));
    child.kill('SIGTERM');
  });
}

/** One chatload run against the server, with --metrics-port 0 and a scraper when `scraped`. */
async function measure(url: string, dir: string, inputFile: string, scraped: boolean): Promise<Measured> {
  let scraper: ChildProcess | undefined;
  const result = await runBenchmark(
    { url, inputFile, numClients: CLIENTS, maxNumRequests: REQUESTS, outputDir: join(dir, `run-${scraped ? 'with' : 'without'}-${Date.now()}`), report: false, metricsPort: scraped ? 0 : undefined },
    { onMetricsServing: (metricsUrl) => (scraper = spawn(process.execPath, ['-e', SCRAPER, metricsUrl], { stdio: ['ignore', 'pipe', 'inherit'] })) },
  );
  const pages = scraper === undefined ? 0 : await stopScraper(scraper);
  const ok = readRequestsJsonl(result.files.requests).filter((r) => r.status === 'ok' && r.ttft_ms !== null && r.tpot_ms !== null);
  return { ttftMs: median(ok.map((r) => r.ttft_ms!)), tpotMs: median(ok.map((r) => r.tpot_ms!)), loopP99Ms: result.clientHealth.event_loop_delay_ms.p99, pages };
}

const server = await startFixedTimingProcess(TIMING);
const dir = mkdtempSync(join(tmpdir(), 'chatload-bench-metrics-port-'));
const inputFile = join(dir, 'in.json');
writeFileSync(inputFile, JSON.stringify(syntheticConversations({ count: REQUESTS, userTurns: () => 1 })));
const rows: string[][] = [];
const ratios: number[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternating order: neither side always runs on a warmer machine.
    const first = round % 2 === 1;
    const a = await measure(server.url, dir, inputFile, !first);
    const b = await measure(server.url, dir, inputFile, first);
    const [without, withMetrics] = first ? [a, b] : [b, a];
    ratios.push(withMetrics.ttftMs / without.ttftMs);
    rows.push([
      String(round),
      `${without.ttftMs.toFixed(2)} / ${withMetrics.ttftMs.toFixed(2)}`,
      (withMetrics.ttftMs / without.ttftMs).toFixed(3),
      `${without.tpotMs.toFixed(3)} / ${withMetrics.tpotMs.toFixed(3)}`,
      (withMetrics.tpotMs / without.tpotMs).toFixed(3),
      `${without.loopP99Ms.toFixed(2)} / ${withMetrics.loopP99Ms.toFixed(2)}`,
      String(withMetrics.pages),
    ]);
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
const table = new Table({
  head: ['round', 'TTFT ms: without / with', 'ratio', 'TPOT ms: without / with', 'ratio', 'loop delay p99 ms', 'pages scraped'],
  style: { head: [], border: [] },
});
table.push(...rows);
console.log(`--metrics-port scraped every 100 ms against a fixed-timing server (first token ${TIMING.ttftMs} ms, then one every ${TIMING.itlMs} ms, ${TIMING.tokens} tokens); ${REQUESTS} requests, ${CLIENTS} clients, medians`);
console.log(table.toString());
console.log(`median TTFT ratio with / without over ${ROUNDS} rounds: ${median(ratios).toFixed(3)}`);
