// Benchmark: does a trace replay send each request at its timestamp? A 10,000-line Mooncake trace with multi-turn
// sessions (writeMooncakeTrace: shared prefixes, 512-token blocks) replays at its native rate against the simulator
// (its own process: its CPU is not the client's), and the schedule lag of every request is read from requests.jsonl. The baseline,
// measured in the same run, is the floor of this event loop: bare timers armed for the same timestamps, doing no
// work, whose lateness is what any Node scheduler pays. Prints p50/p99/max lag of both and their ratio.
// Usage: node --import tsx bench/trace-replay.ts [lines=10000] [gap_ms=5]
import Table from 'cli-table3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBenchmark } from '../src/benchmark/run-benchmark.js';
import { loadDataset } from '../src/conversation/load.js';
import { percentile } from '../src/metrics/stats.js';
import { readRequestsJsonl } from '../src/store/requests-jsonl.js';
import { writeMooncakeTrace } from '../test/helpers/traces.js';
import { liveCpuMs } from './child-cpu.js';
import { startSimProcess } from './sim-process.js';

const LINES = Number(process.argv[2] ?? 10_000);
const GAP_MS = Number(process.argv[3] ?? 5);
const TURNS = 3;
const SESSION_EVERY = 4;

/** Lines written for `rows` timestamped rows: every SESSION_EVERY-th opens a session of TURNS lines. */
const rowsFor = (lines: number): number => Math.round(lines / (1 + (TURNS - 1) / SESSION_EVERY));

function lagStats(lags: number[]): { p50: number; p99: number; max: number } {
  const sorted = Float64Array.from(lags).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1]! };
}

/** The floor: one timer per first-turn timestamp, as the replay arms them (rounded up to whole ms), doing nothing. */
async function timerFloor(startsMs: number[]): Promise<number[]> {
  const t0 = performance.now();
  const lags: number[] = [];
  for (const at of startsMs) {
    const wait = t0 + at - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
    lags.push(Math.max(0, performance.now() - (t0 + at)));
  }
  return lags;
}

const dir = mkdtempSync(join(tmpdir(), 'chatload-bench-trace-'));
const file = writeMooncakeTrace(dir, { rows: rowsFor(LINES), blockSize: 512, gapMs: GAP_MS, prefixes: 8, sessionEvery: SESSION_EVERY, turns: TURNS, seed: 3 });
const loaded = await loadDataset(file);
const lines = loaded.conversations.reduce((n, c) => n + c.trace!.turns.length, 0);
const starts = loaded.conversations.map((c) => c.trace!.turns[0]!.atMs!);
const sim = await startSimProcess({ profile: 'cpu-tiny', config: { block_size: 512, num_gpu_blocks: 2048, max_model_len: 32768, max_num_batched_tokens: 65536 } });
try {
  const floor = lagStats(await timerFloor(starts));
  const simCpuBefore = liveCpuMs(sim.pid);
  const result = await runBenchmark({ url: sim.url, inputFile: file, outputDir: join(dir, 'run') });
  const simCpuMs = liveCpuMs(sim.pid) - simCpuBefore;
  const health = result.clientHealth;
  const records = readRequestsJsonl(result.files.requests);
  const failed = records.filter((r) => r.status !== 'ok').length;
  const firstTurns = records.filter((r) => r.turn === 1).map((r) => r.schedule_lag_ms!);
  const all = lagStats(records.map((r) => r.schedule_lag_ms!));
  const first = lagStats(firstTurns);
  const table = new Table({ head: ['sends', 'count', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'p99 / floor p99'], style: { head: [], border: [] } });
  const row = (name: string, n: number, s: { p50: number; p99: number; max: number }): string[] => [name, String(n), s.p50.toFixed(2), s.p99.toFixed(2), s.max.toFixed(2), (s.p99 / floor.p99).toFixed(2)];
  table.push(row('baseline: bare timers at the session starts', starts.length, floor), row('chatload: sessions at their timestamps', firstTurns.length, first), row('chatload: every request', records.length, all));
  console.log(table.toString());
  console.log(
    `${lines} trace lines (${loaded.conversations.length} sessions) over ${(starts[starts.length - 1]! / 1000).toFixed(1)} s at the native rate; ` +
      `${records.length} requests, ${failed} failed; runtime ${result.summary.runtime_sec.toFixed(1)} s; ` +
      `cached ${result.summary.total_cached_tokens} of ${result.summary.total_input_tokens} input tokens (expected ${result.summary.total_expected_cached_tokens})`,
  );
  const perRequest = (ms: number): string => (ms / records.length).toFixed(3);
  console.log(
    `client CPU ${perRequest(health.cpu_user_ms + health.cpu_system_ms)} ms/request (${health.cpu_percent_of_one_core.toFixed(0)}% of one core), ` +
      `event-loop delay p99 ${health.event_loop_delay_ms.p99.toFixed(2)} ms; simulator CPU ${perRequest(simCpuMs)} ms/request; load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`,
  );
} finally {
  await sim.close();
}
