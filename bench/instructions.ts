// Instructions, not seconds (issue #33, part 5): chatload all-in and the client floor (bench/all-in.ts) under
// `valgrind --tool=callgrind`, which counts the instructions every thread of the process executed. A count does not
// move with the machine's load the way CPU time does, though it is not exact either: the simulator (not under valgrind)
// answers a process slowed ~50x, so how the stream falls into reads, and when V8 compiles and collects, still vary (a
// few % between runs of the same build). Each client runs at two lengths (--fit A,B); a line through the medians gives
// instructions per request (the slope) and the fixed part; --before adds another build, alternating.
//
//   node --import tsx bench/instructions.ts [--rounds 2] [--fit 100,600] [--before OTHER/dist/bundle/chatload.js] [--answer-tokens 128]
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureDist } from '../test/helpers/dist.js';
import { tempDir } from '../test/helpers/tmp.js';
import { CHATLOAD_BIN, chatloadArgs, floorArgs, writeAllInDataset } from './all-in.js';
import { median } from './child-cpu.js';
import { startSimProcess } from './sim-process.js';

const value = (name: string): string | undefined => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const ROUNDS = Number(value('--rounds') ?? 2);
const [SMALL, LARGE] = (value('--fit') ?? '100,600').split(',').map(Number) as [number, number];
const BEFORE = value('--before');
/** `--answer-tokens N`: the simulator answers N tokens (its default_max_tokens), as in bench/startup.ts; cpu-tiny's 128 without. */
const ANSWER_TOKENS = value('--answer-tokens') === undefined ? undefined : Number(value('--answer-tokens'));
if (ANSWER_TOKENS !== undefined && !(Number.isInteger(ANSWER_TOKENS) && ANSWER_TOKENS >= 1)) throw new Error('--answer-tokens: expected a whole number of tokens, 1 or more');
if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed');

ensureDist();
const work = tempDir('bench-instructions');
const dataset = writeAllInDataset(work, LARGE);
const clients: Array<[string, string | undefined]> = [['floor', undefined], ['chatload', CHATLOAD_BIN], ...(BEFORE !== undefined ? [['--before', BEFORE] as [string, string]] : [])];

/** Instructions of one run of `bin` (the floor when undefined) at `requests`, every thread. */
async function count(bin: string | undefined, requests: number, tag: string): Promise<number> {
  const sim = await startSimProcess({ profile: 'cpu-tiny', ...(ANSWER_TOKENS === undefined ? {} : { config: { default_max_tokens: ANSWER_TOKENS } }) });
  try {
    const run = { url: sim.url, dataset, requests };
    const args = bin === undefined ? floorArgs(run) : chatloadArgs(run, join(work, tag), bin);
    const out = spawnSync('valgrind', ['--tool=callgrind', `--callgrind-out-file=${join(work, `${tag}.callgrind`)}`, process.execPath, ...args], { encoding: 'utf8' });
    const collected = /Collected : (\d+)/.exec(out.stderr);
    if (out.status !== 0 || collected === null) throw new Error(`${tag} failed (${out.status}): ${out.stderr.slice(-500)}`);
    return Number(collected[1]);
  } finally {
    await sim.close();
  }
}

const counts = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const n of [SMALL, LARGE]) {
    for (let k = 0; k < clients.length; k++) {
      const [name, bin] = clients[(k + round) % clients.length]!;
      const key = `${name} ${n}`;
      counts.set(key, [...(counts.get(key) ?? []), await count(bin, n, `${name.replace(/\W/g, '')}-${n}-${round}`)]);
    }
  }
}
const g = (x: number): string => `${(x / 1e9).toFixed(3)} G`;
const line = (name: string): { perRequest: number; fixed: number } => {
  const a = median(counts.get(`${name} ${SMALL}`)!);
  const b = median(counts.get(`${name} ${LARGE}`)!);
  const perRequest = (b - a) / (LARGE - SMALL);
  return { perRequest, fixed: a - perRequest * SMALL };
};
console.log(`instructions (callgrind, every thread), medians of ${ROUNDS} at ${SMALL} and ${LARGE} requests, -p 50, cpu-tiny simulator, ${ANSWER_TOKENS ?? 128}-token answers`);
console.log('| client | runs at each length | per request | fixed |\n| --- | --- | --- | --- |');
for (const [name] of clients) {
  const l = line(name);
  console.log(`| ${name} | ${SMALL}: ${counts.get(`${name} ${SMALL}`)!.map(g).join(', ')}; ${LARGE}: ${counts.get(`${name} ${LARGE}`)!.map(g).join(', ')} | ${(l.perRequest / 1e6).toFixed(2)} M | ${g(l.fixed)} |`);
}
const floor = line('floor');
for (const [name] of clients.slice(1)) {
  const l = line(name);
  const at = (n: number): string => ((l.fixed + n * l.perRequest) / (floor.fixed + n * floor.perRequest)).toFixed(2);
  console.log(`${name}: per request ${(l.perRequest / floor.perRequest).toFixed(2)}x the floor's; fixed ${g(l.fixed - floor.fixed)} above the floor's; the line's ratio ${at(1000)}x at 1,000 requests, ${at(4000)}x at 4,000`);
}
