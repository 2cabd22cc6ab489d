// Where chatload all-in allocates, against the client floor (issue #33, part 5): both run as bench/all-in.ts runs
// them, each in a child process under a V8 sampling heap profiler that counts the objects the collectors freed too
// (bench/alloc-preload.mjs), so a figure is everything allocated, not what survived. Allocation is what the young
// generation's scavenges copy and the GC's helper threads work on: chatload's per-request CPU above the floor's is in
// good part its other threads' (bench/NOTES.md). chatload runs from tsc's dist/ (the bundle allocates alike; its chunks'
// names say nothing of where). Prints the total per request of each, then chatload's largest sites (self size; a
// native frame such as Map or Array is shown with the JS function that called it) and files.
//
//   node --import tsx bench/allocation-sites.ts [--requests 3000] [--answer-tokens 40] [--top 30]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { DIST_CLI_UNBUNDLED, ensureDist } from '../test/helpers/dist.js';
import { tempDir } from '../test/helpers/tmp.js';
import { chatloadArgs, floorArgs, writeAllInDataset } from './all-in.js';
import { nodeCost } from './child-cpu.js';
import { startSimProcess } from './sim-process.js';

const value = (name: string): string | undefined => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const REQUESTS = Number(value('--requests') ?? 3000);
const ANSWER_TOKENS = Number(value('--answer-tokens') ?? 40);
const TOP = Number(value('--top') ?? 30);
const PRELOAD = fileURLToPath(new URL('alloc-preload.mjs', import.meta.url));

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Self bytes by site (`function file:line`, a native frame with its JS caller) and by file, and the total. */
function sites(head: ProfileNode): { total: number; bySite: Map<string, number>; byFile: Map<string, number> } {
  const bySite = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  const walk = (n: ProfileNode, caller: string): void => {
    const { functionName, url, lineNumber } = n.callFrame;
    const file = url.replace(/^.*\/(dist|node_modules)\//, '$1/');
    const here = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    const key = file === '' ? `${functionName || '(native)'} <- ${caller}` : here;
    bySite.set(key, (bySite.get(key) ?? 0) + n.selfSize);
    byFile.set(file || '(native)', (byFile.get(file || '(native)') ?? 0) + n.selfSize);
    total += n.selfSize;
    for (const child of n.children) walk(child, file === '' ? caller : here);
  };
  walk(head, '');
  return { total, bySite, byFile };
}

const top = (m: Map<string, number>, n: number): string[] =>
  [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `| ${(v / REQUESTS).toFixed(0)} | ${k.replace(/\|/g, '\\|')} |`);

ensureDist();
const work = tempDir('bench-alloc');
const dataset = writeAllInDataset(work, REQUESTS);
const results: Record<'floor' | 'chatload', ReturnType<typeof sites>> = {} as never;
for (const who of ['floor', 'chatload'] as const) {
  const sim = await startSimProcess({ profile: 'cpu-tiny', config: { default_max_tokens: ANSWER_TOKENS } });
  try {
    const run = { url: sim.url, dataset, requests: REQUESTS };
    const profile = join(work, `${who}.heapprofile`);
    const args = who === 'floor' ? floorArgs(run) : chatloadArgs(run, join(work, 'run'), DIST_CLI_UNBUNDLED);
    const cost = await nodeCost(['--import', PRELOAD, ...args], { env: { ...process.env, ALLOC_PROFILE: profile } });
    if (cost.code !== 0) throw new Error(`${who} failed (${cost.code}): ${cost.stderr.slice(-800)}`);
    results[who] = sites((JSON.parse(readFileSync(profile, 'utf8')) as { head: ProfileNode }).head);
  } finally {
    await sim.close();
  }
}
const perRequest = (who: 'floor' | 'chatload'): number => results[who].total / REQUESTS;
console.log(`allocation, ${REQUESTS} requests at -p 50, ${ANSWER_TOKENS}-token answers (sampled, freed objects included)`);
console.log(`floor ${(perRequest('floor') / 1024).toFixed(1)} KB a request; chatload ${(perRequest('chatload') / 1024).toFixed(1)} KB a request (${(perRequest('chatload') / perRequest('floor')).toFixed(2)}x), start-up and the end of the run included`);
console.log(`\nchatload's largest sites, bytes a request\n| bytes | site |\n| --- | --- |\n${top(results.chatload.bySite, TOP).join('\n')}`);
console.log(`\nchatload by file, bytes a request\n| bytes | file |\n| --- | --- |\n${top(results.chatload.byFile, 20).join('\n')}`);
console.log(`\nthe floor by file, bytes a request\n| bytes | file |\n| --- | --- |\n${top(results.floor.byFile, 10).join('\n')}`);
