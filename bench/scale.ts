// Benchmark: is the client honest at scale? Against the simulator in a child process (its CPU is not the client's):
//  1. capacity: concurrent streams with 1 and 2 worker threads; the client's event-loop delay p99 (worst thread),
//     ITL p99 against the server's fixed 50 ms step, client CPU µs per streamed token, and every request completing;
//  2. timestamp fidelity: client TTFT minus the simulator's traced TTFT, p50/p99, with 10 streams in flight
//     (baseline) and with 1,000, at steady state;
//  3. open-loop rate accuracy: sessions started per second against the seeded schedule's own count;
//  4. memory: peak RSS with many concurrent conversations and 2 workers (--full: 10,000).
// Usage: node --import tsx bench/scale.ts [--full]   (default levels keep it to a few minutes on 2 cores)
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Table from 'cli-table3';
import { runBenchmark, type BenchmarkResult } from '../src/benchmark/run-benchmark.js';
import { arrivalScheduleFor } from '../src/load/executors/open-sessions.js';
import { percentile } from '../src/metrics/stats.js';
import { readRequestsJsonl } from '../src/store/requests-jsonl.js';
import { startSimProcess } from './sim-process.js';

const FULL = process.argv.includes('--full');
const LEVELS = FULL ? [200, 500, 1000, 2000, 4000] : [200, 500, 1000, 2000];
const MEMORY_STREAMS = FULL ? 10_000 : 3_000;
const tmp = mkdtempSync(join(tmpdir(), 'chatload-bench-scale-'));
let run = 0;

/** A simulator whose step takes 50 ms however wide the batch: inter-token latency is 50 ms by construction. */
const FIXED_STEP = {
  step_base_ms: 50,
  prefill_ms_per_token: 0,
  decode_ms_per_seq: 0,
  attention_ms_per_token: 0,
  max_num_seqs: 20_000,
  max_num_batched_tokens: 10_000_000,
  num_gpu_blocks: 4_000_000,
  max_model_len: 32_768,
};

function dataset(conversations: number, turns: number): string {
  const file = join(tmp, `data-${conversations}-${turns}.json`);
  const list = Array.from({ length: conversations }, (_, c) => ({
    id: `c${c}`,
    messages: Array.from({ length: turns * 2 }, (_, m) => ({ role: m % 2 === 0 ? 'user' : 'assistant', content: `conversation ${c} message ${m}: tell me more about the river` })),
  }));
  writeFileSync(file, JSON.stringify(list));
  return file;
}

function worstLoopDelayP99(result: BenchmarkResult): number {
  const all = [result.clientHealth, ...(result.load.workerHealth ?? [])].filter((h) => h !== null && h !== undefined);
  return Math.max(...all.map((h) => h!.event_loop_delay_ms.p99));
}

async function capacity(): Promise<void> {
  const sim = await startSimProcess({ config: FIXED_STEP });
  const table = new Table({ head: ['streams', 'workers', 'completed', 'failed', 'loop delay p99 ms', 'ITL p50 ms', 'ITL p99 ms', 'client CPU µs/token'], style: { head: [], border: [] } });
  const held: Record<number, number> = { 1: 0, 2: 0 };
  try {
    for (const workers of [1, 2]) {
      for (const streams of LEVELS) {
        const result = await runBenchmark({
          url: sim.url,
          inputFile: dataset(streams, 2),
          numClients: streams,
          workers,
          limitMinTokens: 60,
          limitMaxTokens: 60,
          earlyStop: false,
          report: false,
          benchmarkTimeoutSec: 120,
          outputDir: join(tmp, `cap-${run++}`),
        });
        // Process-wide CPU (every thread) from the engine's start to its end, so dataset loading is not counted.
        const cpuUs = (result.clientHealth.cpu_user_ms + result.clientHealth.cpu_system_ms) * 1000;
        const tokens = result.summary.total_output_tokens;
        const delay = worstLoopDelayP99(result);
        if (delay < 10 && result.summary.failed === 0) held[workers] = Math.max(held[workers]!, streams);
        table.push([
          streams,
          workers,
          result.summary.completed,
          result.summary.failed,
          delay.toFixed(2),
          result.summary.metrics.itl_ms?.p50.toFixed(2) ?? '-',
          result.summary.metrics.itl_ms?.p99.toFixed(2) ?? '-',
          tokens > 0 ? (cpuUs / tokens).toFixed(2) : '-',
        ]);
      }
    }
  } finally {
    await sim.close();
  }
  console.log('1. capacity (server step fixed at 50 ms; each stream answers 60 tokens per turn, 2 turns)');
  console.log(table.toString());
  console.log(`most concurrent streams with loop delay p99 < 10 ms: ${held[1]} with 1 worker, ${held[2]} with 2 workers (of the levels tried)`);
}

async function fidelity(): Promise<void> {
  // Steady state, not a cold start: sessions arrive one by one (open loop) and each streams for `answerTokens` x 50 ms,
  // so after the first 10 s about `streams` streams are in flight; only requests sent after that are compared. The
  // baseline's answers are shorter (1 s) so that it, too, compares ~100 requests.
  const seconds = 20;
  const rows: string[][] = [];
  for (const { streams, answerTokens } of [
    { streams: 10, answerTokens: 20 },
    { streams: 1000, answerTokens: 200 },
  ]) {
    const trace = join(tmp, `trace-${streams}.jsonl`);
    const sim = await startSimProcess({ config: FIXED_STEP, trace });
    const rate = streams / ((answerTokens * FIXED_STEP.step_base_ms) / 1000);
    const simCpuBefore = processCpuMs(sim.pid);
    let result: BenchmarkResult;
    let simCpuMs: number | null = null;
    try {
      result = await runBenchmark({
        url: sim.url,
        inputFile: dataset(Math.ceil(rate * seconds) + 10, 1),
        sessionRate: rate,
        durationSec: seconds,
        sendConversationId: true,
        limitMinTokens: answerTokens,
        limitMaxTokens: answerTokens,
        workers: 1,
        report: false,
        outputDir: join(tmp, `fid-${run++}`),
      });
      const simCpuAfter = processCpuMs(sim.pid);
      if (simCpuBefore !== null && simCpuAfter !== null) simCpuMs = simCpuAfter - simCpuBefore;
    } finally {
      await sim.close(); // flushes the trace
    }
    const server = new Map<string, { arrival_ms: number; first_token_ms: number }>();
    for (const line of readFileSync(trace, 'utf8').trim().split('\n')) {
      const t = JSON.parse(line) as { session_id: string | null; arrival_ms: number; first_token_ms: number | null };
      if (t.session_id !== null && t.first_token_ms !== null) server.set(t.session_id, { arrival_ms: t.arrival_ms, first_token_ms: t.first_token_ms });
    }
    const records = readRequestsJsonl(result.files.requests);
    const steady = records.filter((r) => r.sent_at_ms >= 10_000 && r.ttft_ms !== null && server.has(r.conversation_id));
    // Both processes stamp epoch ms as performance.timeOrigin + performance.now(), which agree across processes here
    // to ~0.05 ms, so the difference splits into the way there (send -> the server's handler) and back (the server's
    // socket flush -> the client's read).
    const diff = sortedOf(steady.map((r) => r.ttft_ms! - (server.get(r.conversation_id)!.first_token_ms - server.get(r.conversation_id)!.arrival_ms)));
    const there = sortedOf(steady.map((r) => server.get(r.conversation_id)!.arrival_ms - r.start_time_ms));
    const back = sortedOf(steady.map((r) => r.start_time_ms + r.ttft_ms! - server.get(r.conversation_id)!.first_token_ms));
    const tokens = records.reduce((n, r) => n + r.output_num_tokens, 0);
    const clientCpuUs = (result.clientHealth.cpu_user_ms + result.clientHealth.cpu_system_ms) * 1000;
    const pair = (sorted: Float64Array): string => `${percentile(sorted, 50).toFixed(2)} / ${percentile(sorted, 99).toFixed(2)}`;
    rows.push([
      String(streams),
      String(steady.length),
      percentile(diff, 50).toFixed(3),
      percentile(diff, 99).toFixed(3),
      pair(there),
      pair(back),
      (clientCpuUs / tokens).toFixed(1),
      simCpuMs === null ? '-' : ((simCpuMs * 1000) / tokens).toFixed(1),
      worstLoopDelayP99(result).toFixed(2),
    ]);
  }
  const table = new Table({
    head: ['streams in flight', 'requests compared', 'client - server TTFT p50 ms', 'p99 ms', 'way there p50/p99 ms', 'way back p50/p99 ms', 'client CPU µs/token', 'simulator CPU µs/token', 'client loop delay p99 ms'],
    style: { head: [], border: [] },
  });
  table.push(...rows);
  console.log('2. timestamp fidelity at steady state (the simulator traces when it received each request and flushed its first token)');
  console.log(table.toString());
}

function sortedOf(values: number[]): Float64Array {
  return Float64Array.from(values).sort();
}

/** CPU time (user + system, ms) a process has used so far, from /proc; null where /proc is not available. */
function processCpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms (USER_HZ = 100 on Linux)
  } catch {
    return null;
  }
}

async function openLoopRate(): Promise<void> {
  const seconds = FULL ? 30 : 12;
  const sim = await startSimProcess({ config: { ...FIXED_STEP, step_base_ms: 10 } });
  try {
    const result = await runBenchmark({ url: sim.url, inputFile: dataset(2000, 2), sessionRate: 20, durationSec: seconds, seed: 3, limitMinTokens: 20, limitMaxTokens: 20, report: false, outputDir: join(tmp, `rate-${run++}`) });
    const firstTurns = readRequestsJsonl(result.files.requests).filter((r) => r.turn === 1);
    const schedule = arrivalScheduleFor({ arrivals: { ratePerSec: 20, burstiness: 1 }, seed: 3 });
    let scheduled = 0;
    while (schedule.next() < seconds * 1000) scheduled++;
    const started = firstTurns.filter((r) => r.scheduled_at_ms! < seconds * 1000).length;
    const lag = Float64Array.from(firstTurns.map((r) => r.schedule_lag_ms!).sort((a, b) => a - b));
    const table = new Table({ head: ['target /s', 'seeded schedule /s', 'sessions started /s', 'started / schedule', 'start lag p50 ms', 'p99 ms'], style: { head: [], border: [] } });
    table.push(['20', (scheduled / seconds).toFixed(3), (started / seconds).toFixed(3), (started / scheduled).toFixed(4), percentile(lag, 50).toFixed(3), percentile(lag, 99).toFixed(3)]);
    console.log(`3. open-loop rate accuracy (--session-rate 20 for ${seconds} s)`);
    console.log(table.toString());
  } finally {
    await sim.close();
  }
}

async function memory(): Promise<void> {
  const sim = await startSimProcess({ config: FIXED_STEP });
  try {
    const before = process.memoryUsage().rss;
    const result = await runBenchmark({ url: sim.url, inputFile: dataset(MEMORY_STREAMS, 2), numClients: MEMORY_STREAMS, workers: 2, limitMinTokens: 40, limitMaxTokens: 40, earlyStop: false, report: false, benchmarkTimeoutSec: 300, outputDir: join(tmp, `mem-${run++}`) });
    const peakMb = process.resourceUsage().maxRSS / 1024;
    const table = new Table({ head: ['concurrent conversations', 'workers', 'completed', 'failed (by kind)', 'RSS before MB', 'peak RSS MB (all threads)'], style: { head: [], border: [] } });
    const kinds = Object.entries(result.summary.failed_by_kind).filter(([, n]) => n > 0).map(([kind, n]) => `${kind} ${n}`);
    table.push([MEMORY_STREAMS, 2, result.summary.completed, `${result.summary.failed}${kinds.length > 0 ? ` (${kinds.join(', ')})` : ''}`, (before / 1048576).toFixed(0), peakMb.toFixed(0)]);
    console.log('4. memory');
    console.log(table.toString());
  } finally {
    await sim.close();
  }
}

// Sections can be picked: bench/scale.ts capacity fidelity (default: all four).
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const sections: Record<string, () => Promise<void>> = { capacity, fidelity, rate: openLoopRate, memory };
for (const [name, section] of Object.entries(sections)) if (wanted.length === 0 || wanted.includes(name)) await section();
