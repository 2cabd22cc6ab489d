// A lean start (issue 17, part 4), measured on the compiled CLI (dist/, what bin/chatload.js runs):
//  1. `chatload --version` and `--help`: wall and CPU, against `node -e 0` in the same run (interleaved, medians);
//  2. `chatload run` start-up up to its first request, CPU (approximate tokenizer), against the client floor's;
//  3. the client floor: a minimal node:http client (client-floor.mjs) replaying the same dataset at -p 50 against
//     the same simulator (`chatload serve --profile cpu-tiny`, its own process, fresh per run), in alternation with
//     chatload all-in (start-up, run, requests.jsonl, results.json, report.html): CPU and wall ratios per round;
//  4. report rendering CPU per request at 1,000 requests (render-report.mjs, on chatload's last run);
//  5. where start-up goes: a CPU profile of `--version` and of `run` up to its first request, and the modules
//     `--version` loads, by package.
//
//   node --import tsx bench/startup.ts [--rounds 3] [--requests 1000]
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { syntheticConversations, writeDataset } from '../test/helpers/datasets.js';
import { ensureDist } from '../test/helpers/dist.js';
import { tempDir } from '../test/helpers/tmp.js';
import { median, nodeCost, nodeWallMs } from './child-cpu.js';
import { cpuByPart } from './cpu-profile.js';
import { startFirstRequestServer } from './first-request.js';
import { startSimProcess } from './sim-process.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const ROUNDS = arg('--rounds', 3);
const REQUESTS = arg('--requests', 1000);
const CLIENTS = 50;
const BIN = fileURLToPath(new URL('../bin/chatload.js', import.meta.url));
const FLOOR = fileURLToPath(new URL('client-floor.mjs', import.meta.url));
const RENDER = fileURLToPath(new URL('render-report.mjs', import.meta.url));
const MODULE_LOG = fileURLToPath(new URL('module-log.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST_MAIN = new URL('../dist/cli/main.js', import.meta.url).href;

const fmt = (ms: number, digits = 0): string => ms.toFixed(digits);
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

ensureDist();
const work = tempDir('bench-startup');
// 250 conversations x 6 user turns (1,500 requests available): a 150-word prefix per conversation, 40-word user turns.
const dataset = writeDataset(work, syntheticConversations({ count: 250, userTurns: () => 6, prefixWords: 150, userWords: 40, answerWords: 60 }));
// The same request body from both clients: no max_tokens / min_tokens, so cpu-tiny answers with its 128-token default.
const runArgs = (url: string, outputDir: string): string[] =>
  [BIN, 'run', '-u', url, '-i', dataset, '-p', String(CLIENTS), '-n', String(REQUESTS), '--tokenizer', 'approx', '--limit-min-tokens', '-1', '--limit-max-tokens', '-1', '-q', '--output-dir', outputDir];
const floorArgs = (url: string): string[] => [FLOOR, url, dataset, String(CLIENTS), String(REQUESTS)];

console.log(`chatload start-up bench: node ${process.version}, ${ROUNDS} rounds, ${REQUESTS} requests at -p ${CLIENTS}\n`);

// 1. --version and --help, interleaved with the baseline so drifts in machine load hit all three alike.
{
  const commands: Array<[string, string[]]> = [['node -e 0 (baseline)', ['-e', '0']], ['chatload --version', [BIN, '--version']], ['chatload --help', [BIN, '--help']]];
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
{
  const probes = { chatload: [] as Array<{ cpuMs: number; wallMs: number }>, floor: [] as Array<{ cpuMs: number; wallMs: number }> };
  let bodies: Record<string, string> = {};
  for (let i = 0; i < 7; i++) {
    const dir = join(work, `probe-${i}`);
    const a = await stub.probe(runArgs(stub.url, dir));
    const b = await stub.probe(floorArgs(stub.url));
    probes.chatload.push(a);
    probes.floor.push(b);
    bodies = { chatload: Object.keys(a.body).sort().join(', '), floor: Object.keys(b.body).sort().join(', ') };
  }
  const row = (name: string, list: Array<{ cpuMs: number; wallMs: number }>): string =>
    `| ${name} | ${fmt(median(list.map((p) => p.cpuMs)))} ms | ${fmt(median(list.map((p) => p.wallMs)))} ms |`;
  console.log('\nstart-up up to the first chat request (CPU of every thread from /proc, median of 7, alternating)');
  console.log('| client | CPU | wall |\n| --- | --- | --- |');
  console.log(row('chatload run (--tokenizer approx)', probes.chatload));
  console.log(row('client floor (node:http, no dependency)', probes.floor));
  console.log(`request body keys: chatload [${bodies.chatload}], floor [${bodies.floor}]`);
  kept.startChatload = median(probes.chatload.map((p) => p.cpuMs));
  kept.startFloor = median(probes.floor.map((p) => p.cpuMs));
}

// 3. chatload all-in against the client floor, same dataset, same concurrency, a fresh simulator per run.
let lastRunDir = '';
{
  const rows: Array<{ floor: { cpuMs: number; wallMs: number }; chatload: { cpuMs: number; wallMs: number } }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const result: Partial<(typeof rows)[number]> = {};
    // Alternate which goes first, so a drift in machine load does not favour one.
    for (const who of round % 2 === 0 ? (['floor', 'chatload'] as const) : (['chatload', 'floor'] as const)) {
      const sim = await startSimProcess({ profile: 'cpu-tiny' });
      try {
        if (who === 'floor') {
          const cost = await nodeCost(floorArgs(sim.url));
          const out = JSON.parse(cost.stdout) as { sent: number; failed: number };
          if (cost.code !== 0 || out.sent !== REQUESTS || out.failed !== 0) throw new Error(`the floor client failed: ${cost.stdout} ${cost.stderr}`);
          result.floor = cost;
        } else {
          lastRunDir = join(work, `run-${round}`);
          const cost = await nodeCost(runArgs(sim.url, lastRunDir));
          const results = JSON.parse(readFileSync(join(lastRunDir, 'results.json'), 'utf8')) as { completed: number; failed: number };
          if (cost.code !== 0 || results.completed !== REQUESTS) throw new Error(`chatload run failed (${cost.code}): ${cost.stderr.slice(-1000)}`);
          result.chatload = cost;
        }
      } finally {
        await sim.close();
      }
    }
    rows.push(result as (typeof rows)[number]);
  }
  console.log(`\nchatload all-in vs the client floor: ${REQUESTS} requests, -p ${CLIENTS}, cpu-tiny simulator (128-token answers) in its own process`);
  console.log('| round | floor CPU | chatload CPU | CPU ratio | floor wall | chatload wall | wall ratio |\n| --- | --- | --- | --- | --- | --- | --- |');
  for (const [i, r] of rows.entries()) {
    console.log(`| ${i + 1} | ${fmt(r.floor.cpuMs)} ms | ${fmt(r.chatload.cpuMs)} ms | ${ratio(r.chatload.cpuMs, r.floor.cpuMs)} | ${fmt(r.floor.wallMs)} ms | ${fmt(r.chatload.wallMs)} ms | ${ratio(r.chatload.wallMs, r.floor.wallMs)} |`);
  }
  kept.allInChatload = median(rows.map((r) => r.chatload.cpuMs));
  kept.allInFloor = median(rows.map((r) => r.floor.cpuMs));
  const cpuRatios = rows.map((r) => r.chatload.cpuMs / r.floor.cpuMs);
  const wallRatios = rows.map((r) => r.chatload.wallMs / r.floor.wallMs);
  console.log(`median ratio: CPU ${median(cpuRatios).toFixed(2)}x (range ${Math.min(...cpuRatios).toFixed(2)}-${Math.max(...cpuRatios).toFixed(2)}), wall ${median(wallRatios).toFixed(2)}x (range ${Math.min(...wallRatios).toFixed(2)}-${Math.max(...wallRatios).toFixed(2)})`);
}

// 4. Rendering report.html of chatload's last run, in fresh processes.
{
  const renders = [] as Array<{ records: number; loadMs: number; importMs: number; coldMs: number; warmMs: number }>;
  for (let i = 0; i < 3; i++) {
    const cost = await nodeCost([RENDER, lastRunDir]);
    renders.push(JSON.parse(cost.stdout) as (typeof renders)[number]);
  }
  const m = (key: 'loadMs' | 'importMs' | 'coldMs' | 'warmMs'): number => median(renders.map((r) => r[key]));
  const per = (ms: number): string => `${(ms / renders[0]!.records).toFixed(3)} ms`;
  console.log(`\nreport.html of a ${renders[0]!.records}-record run (CPU, median of 3 fresh processes)`);
  console.log('| step | CPU | per request |\n| --- | --- | --- |');
  console.log(`| load results.json + requests.jsonl | ${fmt(m('loadMs'))} ms | ${per(m('loadMs'))} |`);
  console.log(`| import the renderer (plot, linkedom) | ${fmt(m('importMs'))} ms | - |`);
  console.log(`| first render (cold) | ${fmt(m('coldMs'))} ms | ${per(m('coldMs'))} |`);
  console.log(`| render, warm (median of 5) | ${fmt(m('warmMs'))} ms | ${per(m('warmMs'))} |`);
  kept.reportImport = m('importMs');
  kept.reportCold = m('coldMs');
}
{
  const k = kept;
  const above = k.allInChatload - k.allInFloor;
  const start = k.startChatload - k.startFloor;
  const report = k.reportImport + k.reportCold;
  console.log(`\nchatload all-in CPU above the floor's (medians): ${fmt(above)} ms = start-up ${fmt(start)} ms + report.html ${fmt(report)} ms (import + cold render) + the rest ${fmt(above - start - report)} ms (the run's own work per request, requests.jsonl, the end-of-run analysis, results.json)`);
}

// 5. Where start-up goes.
{
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
  await profile('chatload --version', async () => {
    await nodeCost([...prof, BIN, '--version']);
    return Infinity;
  });
  // SIGINT: chatload stops its run and exits normally, so V8 writes the profile; samples after the request are cut.
  await profile('chatload run up to its first request', async () => (await stub.probe([...prof, ...runArgs(stub.url, join(work, 'prof-run'))], 'SIGINT')).atMonotonicUs);

  const log = join(work, 'modules.log');
  await nodeCost(['--import', MODULE_LOG, BIN, '--version'], { env: { MODULE_LOG: log } });
  const files = new Set(readFileSync(log, 'utf8').trim().split('\n').map((line) => line.slice(4).replace(/^file:\/\//, '')));
  const byPackage = new Map<string, number>();
  for (const file of files) {
    const key = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1] ?? (file.startsWith('node:') ? 'node: built-ins' : /\/dist\//.test(file) ? 'chatload dist/' : 'other');
    byPackage.set(key, (byPackage.get(key) ?? 0) + 1);
  }
  // Each dependency `--version` loads, imported alone in a fresh process (CPU of the import itself, median of 3):
  // what loading it lazily would save at most, before sharing (zod is imported by several of them).
  const deps = Object.keys((JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { dependencies: object }).dependencies);
  const alone = new Map<string, number>();
  for (const spec of [DIST_MAIN, ...deps.filter((d) => byPackage.has(d))]) {
    const code = `const t = process.cpuUsage(); await import(${JSON.stringify(spec)}); const u = process.cpuUsage(t); console.log((u.user + u.system) / 1000);`;
    const runs = [] as number[];
    for (let i = 0; i < 3; i++) runs.push(Number((await nodeCost(['--input-type=module', '-e', code], { cwd: ROOT })).stdout));
    alone.set(spec === DIST_MAIN ? 'all of dist/cli/main.js' : spec, median(runs));
  }
  console.log(`\nmodules loaded by chatload --version: ${files.size} (ES modules and CommonJS files)`);
  console.log('| package | files | CPU to import it alone |\n| --- | --- | --- |');
  console.log(`| all of dist/cli/main.js | ${files.size} | ${fmt(alone.get('all of dist/cli/main.js')!)} ms |`);
  for (const [key, count] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 16)) {
    console.log(`| ${key} | ${count} | ${alone.has(key) ? `${fmt(alone.get(key)!)} ms` : '-'} |`);
  }
}

await stub.close();
rmSync(work, { recursive: true, force: true });
