// scratch: start-up to first request, bundle (and BINS), alternating with the floor; optional profile of the bundle
import { join } from 'node:path';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { syntheticConversations, writeDataset } from '../test/helpers/datasets.js';
import { tempDir } from '../test/helpers/tmp.js';
import { median } from './child-cpu.js';
import { startFirstRequestServer } from './first-request.js';
const BIN = fileURLToPath(new URL('../bin/chatload.js', import.meta.url));
const FLOOR = fileURLToPath(new URL('client-floor.mjs', import.meta.url));
const work = tempDir('sq');
const dataset = writeDataset(work, syntheticConversations({ count: 250, userTurns: () => 6, prefixWords: 150, userWords: 40, answerWords: 60 }));
const runArgs = (url: string, out: string, bin: string): string[] => [bin, 'run', '-u', url, '-i', dataset, '-p', '50', '-n', '1000', '--tokenizer', 'approx', '--limit-min-tokens', '-1', '--limit-max-tokens', '-1', '-q', '--output-dir', out];
const stub = await startFirstRequestServer();
if (process.env.PROF) {
  const dir = process.env.PROF; rmSync(dir, { recursive: true, force: true }); mkdirSync(dir);
  const r = await stub.probe(['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '100', ...runArgs(stub.url, join(work, 'p'), process.env.PROFBIN ?? BIN)], 'SIGINT');
  console.log(r.cpuMs, r.atMonotonicUs, readdirSync(dir));
  await stub.close(); process.exit(0);
}
const bins = [BIN, ...(process.env.BINS ?? '').split(',').filter(Boolean)];
const res: Record<string, number[]> = { floor: [] };
for (const b of bins) res[b] = [];
for (let i = 0; i < Number(process.env.N ?? 7); i++) {
  for (const b of bins) res[b]!.push((await stub.probe(runArgs(stub.url, join(work, `p${i}${b.length}`), b))).cpuMs);
  res.floor!.push((await stub.probe([FLOOR, stub.url, dataset, '50', '1000'])).cpuMs);
}
for (const [k, v] of Object.entries(res)) console.log(k.slice(-40).padEnd(40), 'median', median(v).toFixed(0), v.map((x) => x.toFixed(0)).join(' '));
await stub.close();
