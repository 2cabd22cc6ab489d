// The end of `chatload run` reads its results folder back to render report.html (issue #33, part 5): how much of
// that is results.json, read from the file and checked against the published schema (readResultsFile, as `chatload
// report` does), against the text the run has just written taken as it is (writtenResults, what a run does since).
// Each reading runs in a fresh process (as a run pays it: the ~100 KB schema is read and parsed once a process), the
// two alternating, over one results folder of a 1,000-request run against the simulator; CPU of the process's main
// thread around the call only (process.threadCpuUsage is not in Node 20: process.cpuUsage, the bench's own
// threads idle meanwhile), medians. Also the whole loadRunData (requests.jsonl streamed back as well) each way.
//
//   node --import tsx bench/end-of-run-read.ts [--rounds 15] [--requests 1000]
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { distModule, ensureDist } from '../test/helpers/dist.js';
import { tempDir } from '../test/helpers/tmp.js';
import { CHATLOAD_BIN, chatloadArgs, writeAllInDataset } from './all-in.js';
import { median } from './child-cpu.js';
import { startSimProcess } from './sim-process.js';

const arg = (name: string, fallback: number): number => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback);
const ROUNDS = arg('--rounds', 15);
const REQUESTS = arg('--requests', 1000);

ensureDist();
const work = tempDir('bench-end-of-run-read');
const dataset = writeAllInDataset(work, REQUESTS);
const outputDir = join(work, 'run');
const sim = await startSimProcess({ profile: 'cpu-tiny' });
try {
  const run = spawnSync(process.execPath, chatloadArgs({ url: sim.url, dataset, requests: REQUESTS }, outputDir, CHATLOAD_BIN), { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the run failed: ${run.stderr.slice(-500)}`);
} finally {
  await sim.close();
}

/** One reading in a fresh process: main-thread-side CPU ms of the call. */
function reading(kind: 'file' | 'written', whole: boolean): number {
  const script = `
    import { readFileSync } from 'node:fs';
    const { readResultsFile, writtenResults } = await import(${JSON.stringify(distModule('store/results-reader.js'))});
    const { loadRunData } = await import(${JSON.stringify(distModule('store/run-data.js'))});
    const path = ${JSON.stringify(join(outputDir, 'results.json'))};
    const text = readFileSync(path, 'utf8'); // the run holds this text already: not counted
    const t0 = process.cpuUsage();
    const results = ${kind === 'file' ? 'readResultsFile(path)' : 'writtenResults(path, text)'};
    if (${whole}) await loadRunData(${JSON.stringify(outputDir)}, ${kind === 'file' ? '{}' : '{ results }'});
    const t = process.cpuUsage(t0);
    console.log((t.user + t.system) / 1000);`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return Number(out.stdout.trim());
}

const ms = { file: [] as number[], written: [] as number[], fileWhole: [] as number[], writtenWhole: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  const order = i % 2 === 0 ? (['file', 'written'] as const) : (['written', 'file'] as const);
  for (const kind of order) {
    ms[kind].push(reading(kind, false));
    ms[kind === 'file' ? 'fileWhole' : 'writtenWhole'].push(reading(kind, true));
  }
}
const f = (list: number[]): string => `${median(list).toFixed(2)} ms (range ${Math.min(...list).toFixed(2)}-${Math.max(...list).toFixed(2)})`;
console.log(`results.json of a ${REQUESTS}-request run, CPU of the call in a fresh process, median of ${ROUNDS} alternating`);
console.log('| reading | results.json alone | loadRunData (requests.jsonl too) |\n| --- | --- | --- |');
console.log(`| readResultsFile (the file, checked against the schema) | ${f(ms.file)} | ${f(ms.fileWhole)} |`);
console.log(`| writtenResults (the text just written) | ${f(ms.written)} | ${f(ms.writtenWhole)} |`);
