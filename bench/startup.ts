// A lean start (issue 17, part 4), measured on the compiled CLI (dist/, what bin/chatload.js runs):
//  1. `chatload --version` and `--help`: wall and CPU, against `node -e 0` in the same run (interleaved, medians);
//  2. `chatload run` start-up up to its first request, CPU (approximate tokenizer), against the client floor's;
//     the shipped esbuild bundle (dist/bundle/, what bin/chatload.js runs) and tsc's unbundled dist/ side by side;
//  3. the client floor: a minimal node:http client (client-floor.mjs) replaying the same dataset at -p 50 against
//     the same simulator (`chatload serve --profile cpu-tiny`, its own process, fresh per run), in alternation with
//     chatload all-in (start-up, run, requests.jsonl, results.json, report.html): CPU and wall ratios per round;
//     then where each one's CPU goes, by component, from a CPU profile of one whole run of each;
//  3t. which threads each client's CPU is on: the main thread against V8's background threads (its optimizing
//      compiler above all), and chatload again with that compiler on the main thread;
//  3f. fixed cost and cost per request: both clients at two run lengths (--fit A,B), a line through each one's CPU;
//  3e. the end of a run: chatload's CPU by thread up to its last response and after it (results.json, the summary,
//      report.html), with --before beside it;
//  4. report rendering CPU per request at 1,000 requests (render-report.mjs, on chatload's last run; with --before,
//     beside the other build's renderer);
//  5. where start-up goes: a CPU profile of `run` up to its first request (unbundled, so frames name their
//     package), the files `--version` and `run` load (bundled and not), and what run's bundle holds, by package.
//
//   node --import tsx bench/startup.ts [--rounds 3] [--requests 1000] [--fit 1000,3000] [--before OTHER/dist/cli/entry.js] [--answer-tokens 128] [--sections 1,2,3,3t,3f,3e,3b,4,5]
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
// @ts-expect-error: plain JS (tools/bundle.mjs runs under node alone, in "prepare"), no declarations
import { BUNDLE_OPTIONS } from '../tools/bundle.mjs';
import { DIST_CLI_UNBUNDLED, ensureDist } from '../test/helpers/dist.js';
import { tempDir } from '../test/helpers/tmp.js';
import { ALL_IN_CLIENTS, CHATLOAD_BIN, chatloadArgs, floorArgs as floorRunArgs, writeAllInDataset } from './all-in.js';
import { median, nodeCost, nodeWallMs } from './child-cpu.js';
import { cpuByComponent, cpuByPart } from './cpu-profile.js';
import { startFirstRequestServer } from './first-request.js';
import { startSimProcess } from './sim-process.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const ROUNDS = arg('--rounds', 3);
/** Section 2's probes of each client: 7, or --rounds when more. */
const STARTUP_ROUNDS = Math.max(7, ROUNDS);
/** `--sections 3,3b`: only those sections (default: all). Section 4 renders the last run of section 3. */
const SECTIONS = process.argv.includes('--sections') ? new Set(process.argv[process.argv.indexOf('--sections') + 1]!.split(',')) : undefined;
const want = (section: string): boolean => SECTIONS === undefined || SECTIONS.has(section);
const REQUESTS = arg('--requests', 1000);
const CLIENTS = ALL_IN_CLIENTS;
const BIN = CHATLOAD_BIN;
/** tsc's unbundled dist/ (what bin/chatload.js ran before the bundle): the "before" of each comparison. */
const UNBUNDLED = DIST_CLI_UNBUNDLED;
/**
 * `--before PATH`: another build's CLI entry (e.g. the main branch's tsc dist/cli/entry.js, built in a clone) probed
 * beside the others in sections 2, 3 and 4, so a change is measured against what it replaces in the same run.
 */
const BEFORE = process.argv.includes('--before') ? process.argv[process.argv.indexOf('--before') + 1] : undefined;
/**
 * `--answer-tokens N`: the simulator's answers are N tokens (its default_max_tokens; the requests carry no max_tokens,
 * so both clients still send the same body) instead of cpu-tiny's 128. Issue #33 states its CPU targets at 40.
 */
const ANSWER_TOKENS = process.argv.includes('--answer-tokens') ? arg('--answer-tokens', 128) : undefined;
if (ANSWER_TOKENS !== undefined && !(Number.isInteger(ANSWER_TOKENS) && ANSWER_TOKENS >= 1)) throw new Error('--answer-tokens: expected a whole number of tokens, 1 or more');
const SIM = { profile: 'cpu-tiny', ...(ANSWER_TOKENS === undefined ? {} : { config: { default_max_tokens: ANSWER_TOKENS } }) };
const RENDER = fileURLToPath(new URL('render-report.mjs', import.meta.url));
const MODULE_LOG = fileURLToPath(new URL('module-log.mjs', import.meta.url));
const BUNDLE_META = fileURLToPath(new URL('../dist/bundle-meta.json', import.meta.url));

const fmt = (ms: number, digits = 0): string => ms.toFixed(digits);
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

ensureDist();
const work = tempDir('bench-startup');
const dataset = writeAllInDataset(work, REQUESTS);
// Section 3f runs other lengths on a dataset of its own: `run` gives them.
type Run = { dataset?: string; requests?: number };
const runArgs = (url: string, outputDir: string, bin = BIN, run: Run = {}): string[] => chatloadArgs({ url, dataset: run.dataset ?? dataset, requests: run.requests ?? REQUESTS }, outputDir, bin);
const floorArgs = (url: string, run: Run = {}): string[] => floorRunArgs({ url, dataset: run.dataset ?? dataset, requests: run.requests ?? REQUESTS });

console.log(`chatload start-up bench: node ${process.version}, ${ROUNDS} rounds, ${REQUESTS} requests at -p ${CLIENTS}\n`);

// 1. --version and --help, interleaved with the baseline so drifts in machine load hit all three alike.
if (want('1')) {
  const commands: Array<[string, string[]]> = [
    ['node -e 0 (baseline)', ['-e', '0']],
    ['chatload --version', [BIN, '--version']],
    ['chatload --help', [BIN, '--help']],
    ['chatload --version, unbundled dist/', [UNBUNDLED, '--version']],
    ['chatload run --help', [BIN, 'run', '--help']],
    ['chatload run --help, unbundled dist/', [UNBUNDLED, 'run', '--help']],
  ];
  const walls = commands.map(() => [] as number[]);
  const cpus = commands.map(() => [] as number[]);
  for (let i = 0; i < 15; i++) {
    for (let k = 0; k < commands.length; k++) {
      const c = (i + k) % commands.length;
      walls[c]!.push(await nodeWallMs(commands[c]![1]));
      if (i < 7) cpus[c]!.push((await nodeCost(commands[c]![1])).cpuMs);
    }
  }
  console.log('| command | wall, median of 15 | CPU, median of 7 | wall vs baseline |\n| --- | --- | --- | --- |');
  for (const [c, [name]] of commands.entries()) {
    console.log(`| ${name} | ${fmt(median(walls[c]!))} ms | ${fmt(median(cpus[c]!))} ms | ${ratio(median(walls[c]!), median(walls[0]!))} |`);
  }
}

// 2. Start-up up to the first chat request, against a stub server, alternating with the floor client.
const stub = await startFirstRequestServer();
/** Medians kept for the closing breakdown of chatload's CPU above the floor's. */
const kept = { startChatload: 0, startFloor: 0, allInChatload: 0, allInFloor: 0, reportImport: 0, reportCold: 0 };
type Probe = { cpuMs: number; mainThreadCpuMs: number; wallMs: number };
if (want('2')) {
  const probes = { chatload: [] as Probe[], unbundled: [] as Probe[], before: [] as Probe[], floor: [] as Probe[] };
  let bodies: Record<string, string> = {};
  // --rounds past 7 gives more probes (the start-up is ~0.3 s, so rounds are cheap and the median steadier).
  for (let i = 0; i < STARTUP_ROUNDS; i++) {
    const a = await stub.probe(runArgs(stub.url, join(work, `probe-${i}`)));
    const u = await stub.probe(runArgs(stub.url, join(work, `probe-u-${i}`), UNBUNDLED));
    if (BEFORE !== undefined) probes.before.push(await stub.probe(runArgs(stub.url, join(work, `probe-b-${i}`), BEFORE)));
    const b = await stub.probe(floorArgs(stub.url));
    probes.chatload.push(a);
    probes.unbundled.push(u);
    probes.floor.push(b);
    bodies = { chatload: Object.keys(a.body).sort().join(', '), floor: Object.keys(b.body).sort().join(', ') };
  }
  const row = (name: string, list: Probe[]): string =>
    `| ${name} | ${fmt(median(list.map((p) => p.cpuMs)))} ms | ${fmt(median(list.map((p) => p.mainThreadCpuMs)))} ms | ${fmt(median(list.map((p) => p.wallMs)))} ms |`;
  console.log(`\nstart-up up to the first chat request (CPU of every thread from /proc, median of ${STARTUP_ROUNDS}, alternating)`);
  console.log('| client | CPU, all threads | of it the main thread | wall |\n| --- | --- | --- | --- |');
  console.log(row('chatload run (--tokenizer approx), the bundle', probes.chatload));
  console.log(row('chatload run, unbundled dist/ (same sources, tsc only)', probes.unbundled));
  if (BEFORE !== undefined) console.log(row(`chatload run, --before ${BEFORE}`, probes.before));
  console.log(row('client floor (node:http, no dependency)', probes.floor));
  const cpu = (list: Array<{ cpuMs: number }>): number => median(list.map((p) => p.cpuMs));
  console.log(`bundle vs unbundled: ${ratio(cpu(probes.chatload), cpu(probes.unbundled))}${BEFORE !== undefined ? `; bundle vs --before: ${ratio(cpu(probes.chatload), cpu(probes.before))}` : ''}; bundle vs the floor: ${ratio(cpu(probes.chatload), cpu(probes.floor))}`);
  console.log(`request body keys: chatload [${bodies.chatload}], floor [${bodies.floor}]`);
  kept.startChatload = median(probes.chatload.map((p) => p.cpuMs));
  kept.startFloor = median(probes.floor.map((p) => p.cpuMs));
}

// 3. chatload all-in against the client floor, same dataset, same concurrency, a fresh simulator per run.
let lastRunDir = '';
if (want('3')) {
  type Cost = { cpuMs: number; wallMs: number };
  const rows: Array<{ floor: Cost; chatload: Cost; unbundled: Cost; before?: Cost }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const result: Partial<(typeof rows)[number]> = {};
    // Rotate which goes first, so a drift in machine load does not favour one.
    const order = BEFORE !== undefined ? (['floor', 'chatload', 'unbundled', 'before'] as const) : (['floor', 'chatload', 'unbundled'] as const);
    for (const who of order.map((_, k) => order[(k + round) % order.length]!)) {
      const sim = await startSimProcess(SIM);
      try {
        if (who === 'floor') {
          const cost = await nodeCost(floorArgs(sim.url));
          const out = JSON.parse(cost.stdout) as { sent: number; failed: number };
          if (cost.code !== 0 || out.sent !== REQUESTS || out.failed !== 0) throw new Error(`the floor client failed: ${cost.stdout} ${cost.stderr}`);
          result.floor = cost;
        } else {
          const dir = join(work, `run-${who}-${round}`);
          if (who === 'chatload') lastRunDir = dir;
          const cost = await nodeCost(runArgs(sim.url, dir, who === 'chatload' ? BIN : who === 'unbundled' ? UNBUNDLED : BEFORE));
          const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { completed: number; failed: number };
          if (cost.code !== 0 || results.completed !== REQUESTS) throw new Error(`chatload run failed (${cost.code}): ${cost.stderr.slice(-1000)}`);
          result[who] = cost;
        }
      } finally {
        await sim.close();
      }
    }
    rows.push(result as (typeof rows)[number]);
  }
  console.log(`\nchatload all-in vs the client floor: ${REQUESTS} requests, -p ${CLIENTS}, cpu-tiny simulator (${ANSWER_TOKENS ?? 128}-token answers) in its own process`);
  const before = BEFORE === undefined ? ['', ''] : [' --before CPU ratio |', ' --- |'];
  console.log(`| round | floor CPU | chatload CPU | CPU ratio | unbundled CPU ratio |${before[0]} floor wall | chatload wall | wall ratio |\n| --- | --- | --- | --- | --- |${before[1]} --- | --- | --- |`);
  for (const [i, r] of rows.entries()) {
    const beforeRatio = r.before === undefined ? '' : ` ${ratio(r.before.cpuMs, r.floor.cpuMs)} |`;
    console.log(`| ${i + 1} | ${fmt(r.floor.cpuMs)} ms | ${fmt(r.chatload.cpuMs)} ms | ${ratio(r.chatload.cpuMs, r.floor.cpuMs)} | ${ratio(r.unbundled.cpuMs, r.floor.cpuMs)} |${beforeRatio} ${fmt(r.floor.wallMs)} ms | ${fmt(r.chatload.wallMs)} ms | ${ratio(r.chatload.wallMs, r.floor.wallMs)} |`);
  }
  kept.allInChatload = median(rows.map((r) => r.chatload.cpuMs));
  kept.allInFloor = median(rows.map((r) => r.floor.cpuMs));
  const cpuRatios = rows.map((r) => r.chatload.cpuMs / r.floor.cpuMs);
  const wallRatios = rows.map((r) => r.chatload.wallMs / r.floor.wallMs);
  console.log(`unbundled dist/: median CPU ratio ${median(rows.map((r) => r.unbundled.cpuMs / r.floor.cpuMs)).toFixed(2)}x`);
  if (BEFORE !== undefined) {
    // The paired difference per round (chatload less --before, ms): the floor's own swings between rounds do not
    // enter it, so it resolves smaller changes than either build's ratio does.
    const diffs = rows.map((r) => r.chatload.cpuMs - r.before!.cpuMs);
    console.log(`--before: median CPU ratio ${median(rows.map((r) => r.before!.cpuMs / r.floor.cpuMs)).toFixed(2)}x; chatload less --before per round: median ${fmt(median(diffs))} ms (range ${fmt(Math.min(...diffs))} to ${fmt(Math.max(...diffs))})`);
  }
  console.log(`median ratio: CPU ${median(cpuRatios).toFixed(2)}x (range ${Math.min(...cpuRatios).toFixed(2)}-${Math.max(...cpuRatios).toFixed(2)}), wall ${median(wallRatios).toFixed(2)}x (range ${Math.min(...wallRatios).toFixed(2)}-${Math.max(...wallRatios).toFixed(2)}); ratio of the medians: CPU ${(kept.allInChatload / kept.allInFloor).toFixed(2)}x`);
}

// 3t. Which threads the CPU is on: each client's main thread against its other threads (V8's optimizing compiler,
// which compiles hot functions in the background, and its GC helpers), and chatload once more with the compiler on the
// main thread (--no-concurrent-recompilation): what its other threads lose then is what the optimizing compiler took.
if (want('3t')) {
  const THREAD_CPU = fileURLToPath(new URL('thread-cpu.mjs', import.meta.url));
  type Threads = { mainMs: number; otherMs: number };
  const runs = { floor: [] as Threads[], chatload: [] as Threads[], compilerOnMain: [] as Threads[] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const who of ['floor', 'chatload', 'compilerOnMain'] as const) {
      const sim = await startSimProcess(SIM);
      const file = join(work, `threads-${who}-${round}.json`);
      try {
        const flags = who === 'compilerOnMain' ? ['--no-concurrent-recompilation'] : [];
        const args = who === 'floor' ? floorArgs(sim.url) : runArgs(sim.url, join(work, `run-threads-${round}-${who}`));
        const cost = await nodeCost([...flags, '--import', THREAD_CPU, ...args], { env: { THREAD_CPU_FILE: file } });
        if (cost.code !== 0) throw new Error(`${who} failed (${cost.code}): ${cost.stderr.slice(-500)}`);
        runs[who].push(JSON.parse(readFileSync(file, 'utf8')) as Threads);
      } finally {
        await sim.close();
      }
    }
  }
  console.log(`
which threads the CPU is on (ms, median of ${ROUNDS}; scheduler accounting of each thread at exit)`);
  console.log('| client | main thread | other threads | all |\n| --- | --- | --- | --- |');
  const row = (name: string, list: Threads[]): void =>
    console.log(`| ${name} | ${fmt(median(list.map((t) => t.mainMs)))} | ${fmt(median(list.map((t) => t.otherMs)))} | ${fmt(median(list.map((t) => t.mainMs + t.otherMs)))} |`);
  row('client floor', runs.floor);
  row('chatload (the bundle)', runs.chatload);
  row('chatload, optimizing compiler on the main thread', runs.compilerOnMain);
  const compilerMs = median(runs.chatload.map((t) => t.otherMs)) - median(runs.compilerOnMain.map((t) => t.otherMs));
  console.log(`chatload's optimizing compiler (its other threads' CPU less theirs with the compiler on the main thread): ~${fmt(compilerMs)} ms`);
}

// 3f. Fixed cost and cost per request: both clients at two run lengths (--fit A,B requests, the same dataset for
// both), each thread's CPU at exit; a line through the two medians gives each client's CPU per request (the slope)
// and its fixed cost (start-up, compiling, the end of the run: the intercept). Their ratio per request is what the
// all-in ratio tends to in long runs; where it crosses 1.3x follows from the four figures.
if (want('3f')) {
  const THREAD_CPU = fileURLToPath(new URL('thread-cpu.mjs', import.meta.url));
  const fitArg = process.argv.includes('--fit') ? process.argv[process.argv.indexOf('--fit') + 1]! : '1000,3000';
  const [small, large] = fitArg.split(',').map(Number) as [number, number];
  if (!(small > 0 && large > small)) throw new Error(`--fit: expected two request counts A,B with 0 < A < B, got ${fitArg}`);
  // One dataset for both lengths, with conversations to spare at the longer one.
  mkdirSync(join(work, 'fit'));
  const fitDataset = writeAllInDataset(join(work, 'fit'), large);
  type Threads = { mainMs: number; otherMs: number };
  // With --before, that build too, alternating with the others: its line beside this one's, from the same rounds.
  const clients = BEFORE !== undefined ? (['floor', 'chatload', 'before'] as const) : (['floor', 'chatload'] as const);
  const runs = new Map<string, Threads[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const n of [small, large]) {
      for (const who of clients.map((_, k) => clients[(k + round) % clients.length]!)) {
        const sim = await startSimProcess(SIM);
        const file = join(work, `fit-${who}-${n}-${round}.json`);
        try {
          const run = { dataset: fitDataset, requests: n };
          const args = who === 'floor' ? floorArgs(sim.url, run) : runArgs(sim.url, join(work, `fit-run-${n}-${round}-${who}`), who === 'before' ? BEFORE : BIN, run);
          const cost = await nodeCost(['--import', THREAD_CPU, ...args], { env: { THREAD_CPU_FILE: file } });
          if (cost.code !== 0) throw new Error(`${who} at ${n} requests failed (${cost.code}): ${cost.stderr.slice(-500)}`);
          const key = `${who} ${n}`;
          runs.set(key, [...(runs.get(key) ?? []), JSON.parse(readFileSync(file, 'utf8')) as Threads]);
        } finally {
          await sim.close();
        }
      }
    }
  }
  type Line = { perRequest: number; fixed: number };
  const fit = (who: string, pick: (t: Threads) => number): Line => {
    const a = median(runs.get(`${who} ${small}`)!.map(pick));
    const b = median(runs.get(`${who} ${large}`)!.map(pick));
    const perRequest = (b - a) / (large - small);
    return { perRequest, fixed: a - perRequest * small };
  };
  const parts: Array<[string, (t: Threads) => number]> = [
    ['main thread', (t) => t.mainMs],
    ['other threads', (t) => t.otherMs],
    ['all threads', (t) => t.mainMs + t.otherMs],
  ];
  console.log(`\nfixed cost and cost per request (CPU by thread at exit, medians of ${ROUNDS} at ${small} and ${large} requests, a line through them; ${ANSWER_TOKENS ?? 128}-token answers)`);
  console.log('| client | threads | per request | fixed |\n| --- | --- | --- | --- |');
  for (const who of clients) for (const [name, pick] of parts) {
    const line = fit(who, pick);
    console.log(`| ${who} | ${name} | ${(line.perRequest * 1000).toFixed(0)} µs | ${fmt(line.fixed)} ms |`);
  }
  for (const who of clients.slice(1)) {
    const label = who === 'before' ? '--before' : 'chatload';
    for (const [name, pick] of parts) {
      const c = fit(who, pick);
      const f = fit('floor', pick);
      console.log(`${name}: ${label} per request ${ratio(c.perRequest, f.perRequest)} the floor's; fixed ${fmt(c.fixed - f.fixed)} ms above the floor's`);
    }
    const c = fit(who, parts[2]![1]);
    const f = fit('floor', parts[2]![1]);
    const at = (n: number): string => ratio(c.fixed + n * c.perRequest, f.fixed + n * f.perRequest);
    // Solving (Fc + n pc) = 1.3 (Ff + n pf) for n; no crossing when chatload's cost per request is 1.3x the floor's or more.
    const crossing = 1.3 * f.perRequest - c.perRequest > 0 ? Math.max(0, Math.ceil((c.fixed - 1.3 * f.fixed) / (1.3 * f.perRequest - c.perRequest))) : Infinity;
    const all = (key: string): number[] => runs.get(key)!.map((t) => t.mainMs + t.otherMs);
    const measured = (n: number): string => ratio(median(all(`${who} ${n}`)), median(all(`floor ${n}`)));
    // Each round's own ratio (the floor of the same round and length), as section 3 gives them.
    const rounds = (n: number): string => all(`${who} ${n}`).map((ms, r) => (ms / all(`floor ${n}`)[r]!).toFixed(2)).join(', ');
    console.log(`${label}, all threads, ratio of the medians: ${measured(small)} at ${small} requests (rounds ${rounds(small)}), ${measured(large)} at ${large} (rounds ${rounds(large)}); the line's: ${[1000, 2000, 5000, 20000].map((n) => `${at(n)} at ${n}`).join(', ')}; ${crossing === Infinity ? 'never under 1.3x' : `1.3x from ~${crossing} requests`}`);
    // Each round's own slope against the floor's in that round: the round's four runs are minutes apart, so a drift in
    // the machine's load between rounds, which moves the medians' line, mostly cancels here; their spread shows how far
    // one estimate of the cost per request can be trusted.
    const slopes = all(`${who} ${small}`).map((ms, r) => (all(`${who} ${large}`)[r]! - ms) / (all(`floor ${large}`)[r]! - all(`floor ${small}`)[r]!));
    console.log(`${label}, all threads, per request against the floor's in each round: median ${median(slopes).toFixed(2)}x (rounds ${slopes.map((x) => x.toFixed(2)).join(', ')})`);
  }
}

// 3e. The end of a run: each build's threads read at its last chat response (thread-cpu.mjs with
// THREAD_CPU_AT_RESPONSES) and at exit; what comes after the last response is the end phase (the analysis,
// results.json, the terminal summary, report.html), which the floor does not have.
if (want('3e')) {
  const THREAD_CPU = fileURLToPath(new URL('thread-cpu.mjs', import.meta.url));
  type Reading = { mainMs: number; otherMs: number };
  type Split = { run: Reading; end: Reading };
  const builds: Array<[string, string]> = [['chatload (the bundle)', BIN], ...(BEFORE !== undefined ? [['--before', BEFORE] as [string, string]] : [])];
  const splits = new Map<string, Split[]>(builds.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, [name, bin]] of builds.entries()) {
      const sim = await startSimProcess(SIM);
      const file = join(work, `end-${round}-${k}.json`);
      try {
        const cost = await nodeCost(['--import', THREAD_CPU, ...runArgs(sim.url, join(work, `run-end-${round}-${k}`), bin)], { env: { THREAD_CPU_FILE: file, THREAD_CPU_AT_RESPONSES: String(REQUESTS) } });
        if (cost.code !== 0) throw new Error(`${name} failed (${cost.code}): ${cost.stderr.slice(-500)}`);
        const t = JSON.parse(readFileSync(file, 'utf8')) as Reading & { atResponse: Reading | null };
        if (t.atResponse === null) throw new Error(`${name}: no reading at its ${REQUESTS}th response`);
        splits.get(name)!.push({ run: t.atResponse, end: { mainMs: t.mainMs - t.atResponse.mainMs, otherMs: t.otherMs - t.atResponse.otherMs } });
      } finally {
        await sim.close();
      }
    }
  }
  console.log(`
the end of a run: CPU by thread up to the last response and after it (ms, median of ${ROUNDS}; scheduler accounting)`);
  console.log('| build | main thread, run | other threads, run | main thread, end | other threads, end | end, all threads |\n| --- | --- | --- | --- | --- | --- |');
  for (const [name, list] of splits) {
    const m = (pick: (s: Split) => number): string => fmt(median(list.map(pick)));
    console.log(`| ${name} | ${m((s) => s.run.mainMs)} | ${m((s) => s.run.otherMs)} | ${m((s) => s.end.mainMs)} | ${m((s) => s.end.otherMs)} | ${m((s) => s.end.mainMs + s.end.otherMs)} |`);
  }
}

// 3b. Where each client's CPU goes over a whole run: a CPU profile of one all-in run of chatload (tsc's unbundled
// dist/, so frames name their files) and of the floor, grouped by component (bench/cpu-profile.ts cpuByComponent).
if (want('3b')) {
  const profDir = join(work, 'profiles-all-in');
  const profiled = async (args: (url: string) => string[]): Promise<Array<{ part: string; ms: number }>> => {
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir);
    const sim = await startSimProcess(SIM);
    try {
      const cost = await nodeCost(['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', '200', ...args(sim.url)]);
      if (cost.code !== 0) throw new Error(`a profiled run failed: ${cost.stderr.slice(-500)}`);
    } finally {
      await sim.close();
    }
    return cpuByComponent(join(profDir, readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))!));
  };
  const chatload = await profiled((url) => runArgs(url, join(work, 'run-profiled'), UNBUNDLED));
  const floor = await profiled(floorArgs);
  const total = (parts: Array<{ ms: number }>): number => parts.reduce((a, p) => a + p.ms, 0);
  const [chatloadMs, floorMs] = [total(chatload), total(floor)];
  console.log(`\nwhere the CPU goes, one profiled all-in run each (--cpu-prof, main thread, sampled ms including the profiler's overhead; unbundled dist/)`);
  console.log(`| component | chatload | share | per request | floor | share |\n| --- | --- | --- | --- | --- | --- |`);
  const floorOf = new Map(floor.map((p) => [p.part, p.ms]));
  const share = (ms: number, of: number): string => `${((100 * ms) / of).toFixed(1)}%`;
  for (const p of chatload) {
    const f = floorOf.get(p.part);
    floorOf.delete(p.part);
    if (p.ms < 0.005 * chatloadMs && (f ?? 0) < 0.005 * floorMs) continue;
    console.log(`| ${p.part} | ${fmt(p.ms)} ms | ${share(p.ms, chatloadMs)} | ${fmt((1000 * p.ms) / REQUESTS)} µs | ${f === undefined ? '-' : `${fmt(f)} ms`} | ${f === undefined ? '-' : share(f, floorMs)} |`);
  }
  for (const [part, ms] of floorOf) if (ms >= 0.005 * floorMs) console.log(`| ${part} | - | - | - | ${fmt(ms)} ms | ${share(ms, floorMs)} |`);
  console.log(`| total | ${fmt(chatloadMs)} ms | | ${fmt((1000 * chatloadMs) / REQUESTS)} µs | ${fmt(floorMs)} ms | |`);
}

// 4. Rendering report.html of chatload's last run, in fresh processes, alternating: the renderer bundled as the
// package's bundle is (what `chatload run` loads), tsc's unbundled dist/, and with --before the other build's
// renderer bundled the same way from its own src/ (the same run folder for all; medians of REPORT_ROUNDS). Each
// twice: as the end of a run pays it (render-report.mjs --as-run: the run command's modules, zod and the option table
// among them, loaded first, untimed) and alone (the renderer's whole closure timed, as this probe did before).
const REPORT_ROUNDS = Math.max(5, ROUNDS);
if (want('4') && lastRunDir !== '') {
  const bundleRenderer = async (root: string, outdir: string): Promise<string> => {
    const entryPoints = { html: 'src/report/html.ts', 'run-data': 'src/store/run-data.ts', 'run-command': 'src/cli/run.ts' };
    await build({ ...BUNDLE_OPTIONS, absWorkingDir: root, entryPoints, outdir, metafile: false });
    return outdir;
  };
  type Render = { records: number; loadMs: number; importMs: number; coldMs: number; warmMs: number };
  type Build = { name: string; modules: string | undefined; asRun: Render[]; alone: Render[] };
  const builds: Build[] = [
    { name: 'bundled', modules: await bundleRenderer(fileURLToPath(new URL('..', import.meta.url)), join(work, 'report-bundle')), asRun: [], alone: [] },
    { name: 'unbundled dist/', modules: undefined, asRun: [], alone: [] },
  ];
  // --before names the other build's CLI entry (dist/cli/entry.js or dist/bundle/chatload.js): its root is 3 levels up.
  if (BEFORE !== undefined) builds.push({ name: '--before, bundled', modules: await bundleRenderer(resolve(BEFORE, '../../..'), join(work, 'report-bundle-before')), asRun: [], alone: [] });
  for (let i = 0; i < REPORT_ROUNDS; i++) {
    for (const mode of ['asRun', 'alone'] as const) {
      for (const b of builds) {
        const args = [RENDER, lastRunDir, ...(b.modules === undefined ? [] : [b.modules]), ...(mode === 'asRun' ? ['--as-run'] : [])];
        const cost = await nodeCost(args);
        if (cost.code !== 0) throw new Error(`render-report.mjs failed (${b.name}): ${cost.stderr.slice(-1000)}`);
        b[mode].push(JSON.parse(cost.stdout) as Render);
      }
    }
  }
  const records = builds[0]!.asRun[0]!.records;
  type Step = (r: Render) => number;
  const m = (list: Render[], step: Step): number => median(list.map(step));
  const per = (ms: number): string => `${(ms / records).toFixed(3)} ms`;
  for (const [mode, title] of [
    ['asRun', 'as the end of a run pays it: what run loaded at its start is loaded first'],
    ['alone', "alone: the renderer's whole closure timed, zod and the option table included"],
  ] as const) {
    console.log(`\nreport.html of a ${records}-record run, ${title} (CPU, median of ${REPORT_ROUNDS} fresh processes each, alternating)`);
    console.log(`| step |${builds.map((b) => ` ${b.name} | per request |`).join('')}\n| --- |${builds.map(() => ' --- | --- |').join('')}`);
    const line = (name: string, step: Step, perRequest: boolean): void => {
      console.log(`| ${name} |${builds.map((b) => ` ${fmt(m(b[mode], step))} ms | ${perRequest ? per(m(b[mode], step)) : '-'} |`).join('')}`);
    };
    line('load results.json + requests.jsonl', (r) => r.loadMs, true);
    line('import the renderer', (r) => r.importMs, false);
    line('first render (cold)', (r) => r.coldMs, true);
    line('import + first render', (r) => r.importMs + r.coldMs, true);
    line('render, warm (median of 5)', (r) => r.warmMs, true);
    if (BEFORE !== undefined) {
      const sum = (r: Render): number => r.importMs + r.coldMs;
      const ratios = builds[0]![mode].map((r, i) => sum(r) / sum(builds[2]![mode][i]!));
      console.log(`import + first render, bundled, against --before's: median ${median(ratios).toFixed(2)}x (range ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}, per round)`);
    }
  }
  kept.reportImport = m(builds[0]!.asRun, (r) => r.importMs);
  kept.reportCold = m(builds[0]!.asRun, (r) => r.coldMs);
}
if (want('2') && want('3') && want('4')) {
  const k = kept;
  const above = k.allInChatload - k.allInFloor;
  const start = k.startChatload - k.startFloor;
  const report = k.reportImport + k.reportCold;
  console.log(`\nchatload all-in CPU above the floor's (medians): ${fmt(above)} ms = start-up ${fmt(start)} ms + report.html ${fmt(report)} ms (import + cold render) + the rest ${fmt(above - start - report)} ms (the run's own work per request, requests.jsonl, the end-of-run analysis, results.json)`);
}

// 5. Where start-up goes.
if (want('5')) {
  const profDir = join(work, 'profiles');
  const profile = async (name: string, run: () => Promise<number>): Promise<void> => {
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir);
    const untilUs = await run();
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error(`no CPU profile for ${name}`);
    const parts = cpuByPart(join(profDir, file), untilUs);
    const total = parts.reduce((a, p) => a + p.ms, 0);
    console.log(`\n${name}: ${fmt(total)} ms of main-thread CPU sampled (--cpu-prof, which adds its own overhead)`);
    console.log('| part | CPU | share |\n| --- | --- | --- |');
    for (const p of parts.slice(0, 12)) console.log(`| ${p.part} | ${fmt(p.ms, 1)} ms | ${((100 * p.ms) / total).toFixed(0)}% |`);
  };
  const prof = ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', '200'];
  // SIGINT: chatload stops its run and exits normally, so V8 writes the profile; samples after the request are cut.
  // The unbundled dist/ names each frame's package; in the bundle they are all "chatload dist/bundle".
  await profile('chatload run up to its first request, unbundled dist/', async () => (await stub.probe([...prof, ...runArgs(stub.url, join(work, 'prof-run-u'), UNBUNDLED)], 'SIGINT')).atMonotonicUs);
  await profile('chatload run up to its first request, the bundle', async () => (await stub.probe([...prof, ...runArgs(stub.url, join(work, 'prof-run'))], 'SIGINT')).atMonotonicUs);

  // The files each loads (ES modules and CommonJS files), bundled and not.
  const filesLoaded = async (name: string, args: (log: string) => Promise<unknown>): Promise<number> => {
    const log = join(work, `modules-${name}.log`);
    await args(log);
    return new Set(readFileSync(log, 'utf8').trim().split('\n').filter((line) => !line.includes('node:'))).size;
  };
  const loaded = {
    versionBundle: await filesLoaded('vb', (log) => nodeCost(['--import', MODULE_LOG, BIN, '--version'], { env: { MODULE_LOG: log } })),
    versionUnbundled: await filesLoaded('vu', (log) => nodeCost(['--import', MODULE_LOG, UNBUNDLED, '--version'], { env: { MODULE_LOG: log } })),
    runBundle: await filesLoaded('rb', (log) => stub.probe(['--import', MODULE_LOG, ...runArgs(stub.url, join(work, 'mod-run'))], 'SIGINT', { MODULE_LOG: log })),
    runUnbundled: await filesLoaded('ru', (log) => stub.probe(['--import', MODULE_LOG, ...runArgs(stub.url, join(work, 'mod-run-u'), UNBUNDLED)], 'SIGINT', { MODULE_LOG: log })),
  };
  console.log('\nfiles loaded (ES modules and CommonJS files, not counting node: built-ins)');
  console.log('| command | the bundle | unbundled dist/ |\n| --- | --- | --- |');
  console.log(`| chatload --version | ${loaded.versionBundle} | ${loaded.versionUnbundled} |`);
  console.log(`| chatload run, up to its first request (then SIGINT) | ${loaded.runBundle} | ${loaded.runUnbundled} |`);

  // What `run` loads before it starts: the static imports of its chunk, by package (esbuild's metafile).
  const meta = JSON.parse(readFileSync(BUNDLE_META, 'utf8')) as { outputs: Record<string, { bytes: number; imports: Array<{ path: string; kind: string; external?: boolean }>; inputs: Record<string, { bytesInOutput: number }> }> };
  const runChunk = Object.keys(meta.outputs).find((f) => meta.outputs[f]!.inputs['src/cli/run.ts'] !== undefined)!;
  const closure = new Set<string>();
  for (const queue = [runChunk, Object.keys(meta.outputs).find((f) => f.endsWith('/chatload.js'))!]; queue.length > 0; ) {
    const file = queue.pop()!;
    if (closure.has(file)) continue;
    closure.add(file);
    for (const i of meta.outputs[file]!.imports) if (i.kind === 'import-statement' && !i.external) queue.push(i.path);
  }
  const bytes = new Map<string, number>();
  for (const file of closure) {
    for (const [input, v] of Object.entries(meta.outputs[file]!.inputs)) {
      const key = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? 'chatload src/';
      bytes.set(key, (bytes.get(key) ?? 0) + v.bytesInOutput);
    }
  }
  const all = [...bytes.values()].reduce((a, b) => a + b, 0);
  console.log(`\nwhat run loads before its first request, in the bundle: ${closure.size} files, ${(all / 1e6).toFixed(2)} MB of code (of ${(Object.values(meta.outputs).reduce((a, o) => a + o.bytes, 0) / 1e6).toFixed(1)} MB in dist/bundle/)`);
  console.log('| package | KB |\n| --- | --- |');
  for (const [key, n] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`| ${key} | ${(n / 1024).toFixed(0)} |`);
}

await stub.close();
rmSync(work, { recursive: true, force: true });
