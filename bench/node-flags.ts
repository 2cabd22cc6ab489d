// Node and V8 flags against chatload's all-in CPU (issue 17, part 4): `chatload run` at -p 50 with each variant's
// flags, V8's defaults, and the client floor (bench/client-floor.mjs), each against a fresh `serve --profile
// cpu-tiny`, in a rotating order every round. Per variant: its CPU ratio to the floor's (median of the rounds), its
// paired difference with the defaults (the floor's swings between rounds do not enter it), the CPU of its main thread
// and of its other threads (V8's compiler and GC helpers), and its GC pauses (`--trace-gc`, given to every chatload
// run alike): a flag that saves CPU by making the pauses longer delays every stream's timestamps.
//
//   node --import tsx bench/node-flags.ts [--rounds 5] [--requests 1000] [--variants JSON]
//
// JSON maps a name to node's arguments, e.g. '{"less inlining":["--max-inlined-bytecode-size-cumulative=300"]}'.
// The default compares --no-parallel-scavenge, the one setting that lowered the CPU in every run (bench/NOTES.md,
// "Fixed cost and cost per request"). "V8 defaults" is chatload as shipped, with the two flags it sets for itself at
// its start (cli/v8-flags.ts: --liftoff-only, and --heap-growing-percent while its memory is under a cap), which
// override the same flags given here on the command line.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chatloadArgs, floorArgs, writeAllInDataset, type AllInRun } from './all-in.js';
import { median, nodeCost } from './child-cpu.js';
import { startSimProcess } from './sim-process.js';
import { ensureDist } from '../test/helpers/dist.js';
import { tempDir } from '../test/helpers/tmp.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const ROUNDS = Number(arg('--rounds') ?? 5);
const REQUESTS = Number(arg('--requests') ?? 1000);
const VARIANTS = JSON.parse(arg('--variants') ?? '{"--no-parallel-scavenge":["--no-parallel-scavenge"]}') as Record<string, string[]>;
if (!(ROUNDS >= 1 && REQUESTS >= 1) || Object.values(VARIANTS).some((flags) => !Array.isArray(flags))) {
  throw new Error('usage: bench/node-flags.ts [--rounds N] [--requests N] [--variants \'{"name":["--flag", ...]}\']');
}
const THREAD_CPU = fileURLToPath(new URL('thread-cpu.mjs', import.meta.url));

/** One run's readings: CPU from rusage (all threads), the main thread's and the others' (schedstat), GC pauses (ms). */
interface Reading {
  cpuMs: number;
  mainMs: number;
  otherMs: number;
  scavenges: number[];
  markCompacts: number[];
}

/**
 * The pauses `--trace-gc` prints, one line a collection: "[pid:addr]  245 ms: Scavenge 4.1 (5.0) -> 3.5 (6.0) MB,
 * 2.51 / 0.02 ms ...": the first figure after the sizes is the pause on the main thread.
 */
function gcPauses(stdout: string): { scavenges: number[]; markCompacts: number[] } {
  const scavenges: number[] = [];
  const markCompacts: number[] = [];
  for (const m of stdout.matchAll(/ ms: (Scavenge|Mark-Compact)\b[^,\n]*MB, ([\d.]+) \/ [\d.]+ ms/g)) {
    (m[1] === 'Scavenge' ? scavenges : markCompacts).push(Number(m[2]));
  }
  return { scavenges, markCompacts };
}

ensureDist();
const work = tempDir('bench-node-flags');
const dataset = writeAllInDataset(work, REQUESTS);
const clients: Array<[string, string[] | null]> = [['floor', null], ['V8 defaults', []], ...Object.entries(VARIANTS)];
const readings = new Map<string, Reading[]>(clients.map(([name]) => [name, []]));
console.log(`node and V8 flags against chatload all-in: node ${process.version}, ${ROUNDS} rounds, ${REQUESTS} requests at -p 50\n`);

for (let round = 0; round < ROUNDS; round++) {
  for (const k of clients.keys()) {
    const [name, flags] = clients[(k + round) % clients.length]!;
    const sim = await startSimProcess({ profile: 'cpu-tiny' });
    const file = join(work, `threads-${round}.json`);
    try {
      const run: AllInRun = { url: sim.url, dataset, requests: REQUESTS };
      const args = flags === null ? floorArgs(run) : ['--trace-gc', ...flags, ...chatloadArgs(run, join(work, `run-${round}-${k}`))];
      const cost = await nodeCost(['--import', THREAD_CPU, ...args], { env: { THREAD_CPU_FILE: file } });
      if (cost.code !== 0) throw new Error(`${name} failed (${cost.code}): ${cost.stderr.slice(-500)}`);
      const threads = JSON.parse(readFileSync(file, 'utf8')) as { mainMs: number; otherMs: number };
      readings.get(name)!.push({ cpuMs: cost.cpuMs, ...threads, ...gcPauses(cost.stdout) });
    } finally {
      await sim.close();
    }
  }
}

const floor = readings.get('floor')!;
const defaults = readings.get('V8 defaults')!;
const fmt = (x: number, digits = 0): string => x.toFixed(digits);
console.log('| chatload with | CPU ratio to the floor (median; range) | less the defaults per round (median; range) | main thread | other threads | scavenges | scavenge pause, median (p90) | mark-compact pauses |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const [name, flags] of clients) {
  if (flags === null) continue;
  const list = readings.get(name)!;
  const ratios = list.map((r, i) => r.cpuMs / floor[i]!.cpuMs);
  const diffs = list.map((r, i) => r.cpuMs - defaults[i]!.cpuMs);
  const scavenges = list.flatMap((r) => r.scavenges).sort((a, b) => a - b);
  const markCompacts = list.flatMap((r) => r.markCompacts);
  const cells = [
    `${fmt(median(ratios), 2)}x (${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)})`,
    name === 'V8 defaults' ? '-' : `${fmt(median(diffs))} ms (${fmt(Math.min(...diffs))} to ${fmt(Math.max(...diffs))})`,
    `${fmt(median(list.map((r) => r.mainMs)))} ms`,
    `${fmt(median(list.map((r) => r.otherMs)))} ms`,
    fmt(median(list.map((r) => r.scavenges.length))),
    `${fmt(median(scavenges), 2)} ms (${fmt(scavenges[Math.floor(scavenges.length * 0.9)] ?? Number.NaN, 2)})`,
    `${fmt(median(list.map((r) => r.markCompacts.length)))} a run, ${fmt(median(markCompacts), 1)} ms median`,
  ];
  console.log(`| ${name === 'V8 defaults' ? name : flags.join(' ')} | ${cells.join(' | ')} |`);
}
console.log(`\nthe floor: ${fmt(median(floor.map((r) => r.cpuMs)))} ms of CPU (median; main thread ${fmt(median(floor.map((r) => r.mainMs)))} ms, other threads ${fmt(median(floor.map((r) => r.otherMs)))} ms)`);
