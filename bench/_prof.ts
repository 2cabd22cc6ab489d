import { copyFileSync } from 'node:fs'; const fs_copy = (f: string) => copyFileSync(f, '/tmp/lean17/last.cpuprofile');
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { syntheticConversations, writeDataset } from '../test/helpers/datasets.js';
import { tempDir } from '../test/helpers/tmp.js';
import { startFirstRequestServer } from './first-request.js';
const work = tempDir('prof');
const dataset = writeDataset(work, syntheticConversations({ count: 250, userTurns: () => 6, prefixWords: 150, userWords: 40, answerWords: 60 }));
const stub = await startFirstRequestServer();
const profDir = join(work, 'p'); mkdirSync(profDir);
const r = await stub.probe(['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', '200', process.argv[2]!, 'run', '-u', stub.url, '-i', dataset, '-p', '50', '-n', '1000', '--tokenizer', 'approx', '--limit-min-tokens', '-1', '--limit-max-tokens', '-1', '-q', '--output-dir', join(work, 'o')], 'SIGINT');
const file = readdirSync(profDir)[0]!;
const p = JSON.parse(readFileSync(join(profDir, file), 'utf8'));
const nodes = new Map<number, any>(p.nodes.map((n: any) => [n.id, n]));
const parent = new Map<number, any>(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n);
const byUrl = new Map<string, number>(); const byFn = new Map<string, number>();
let t = p.startTime;
for (let i = 0; i < p.samples.length; i++) { t += p.timeDeltas[i]; if (t > r.atMonotonicUs) break;
  let n = nodes.get(p.samples[i]); let f = n.callFrame; let at = n; while (f.url === '' && !f.functionName.startsWith('(') && at) { at = parent.get(at.id); if (at) f = at.callFrame; }
  const u = f.url.replace(/.*\//, '') || f.functionName; byUrl.set(u, (byUrl.get(u) ?? 0) + p.timeDeltas[i] / 1000);
  const k = `${n.callFrame.functionName} ${n.callFrame.url.replace(/.*\//, '')}:${n.callFrame.lineNumber}`; byFn.set(k, (byFn.get(k) ?? 0) + p.timeDeltas[i] / 1000);
}
console.log('cpu at first request', r.cpuMs.toFixed(0));
for (const [k, v] of [...byUrl].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(v.toFixed(1), k);
console.log('---');
for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(v.toFixed(1), k);
if (process.env.KEEP) fs_copy(join(profDir, file)); await stub.close(); rmSync(work, { recursive: true, force: true });
