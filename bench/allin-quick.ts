// scratch (not committed): floor vs chatload all-in variants, alternating
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { syntheticConversations, writeDataset } from '../test/helpers/datasets.js';
import { DIST_CLI_UNBUNDLED, ensureDist } from '../test/helpers/dist.js';
import { tempDir } from '../test/helpers/tmp.js';
import { median, nodeCost } from './child-cpu.js';
import { startSimProcess } from './sim-process.js';
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BIN = fileURLToPath(new URL('../bin/chatload.js', import.meta.url));
const FLOOR = fileURLToPath(new URL('client-floor.mjs', import.meta.url));
ensureDist();
const work = tempDir('allin');
const dataset = writeDataset(work, syntheticConversations({ count: 250, userTurns: () => 6, prefixWords: 150, userWords: 40, answerWords: 60 }));
const runArgs = (url: string, out: string, bin: string, pre: string[] = []): string[] => [...pre, bin, 'run', '-u', url, '-i', dataset, '-p', '50', '-n', '1000', '--tokenizer', 'approx', '--limit-min-tokens', '-1', '--limit-max-tokens', '-1', '-q', '--output-dir', out];
if (process.env.PROF) {
  const sim = await startSimProcess({ profile: 'cpu-tiny' });
  const c = await nodeCost(runArgs(sim.url, join(work, 'p'), process.env.PROFBIN ?? DIST_CLI_UNBUNDLED, ['--cpu-prof', '--cpu-prof-dir', process.env.PROF, '--cpu-prof-interval', '100']));
  console.log('prof', c.cpuMs, c.code, c.stderr.slice(-500));
  await sim.close();
  process.exit(0);
}
type V = { name: string; bin?: string; env?: Record<string, string>; args?: string[] };
const variants: V[] = [{ name: 'floor' }, ...(JSON.parse(process.env.VARIANTS ?? '[{"name":"chatload"}]') as V[])];
const res: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < variants.length; k++) {
    const v = variants[(k + r) % variants.length]!;
    const sim = await startSimProcess({ profile: 'cpu-tiny' });
    const dir = join(work, `r${r}${k}`);
    const cost = v.name === 'floor' ? await nodeCost([FLOOR, sim.url, dataset, '50', '1000']) : await nodeCost([...runArgs(sim.url, dir, v.bin ?? BIN), ...(v.args ?? [])], { env: v.env });
    if (cost.code !== 0) throw new Error(cost.stderr);
    if (v.name !== 'floor') { const j = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')); if (j.completed !== 1000) throw new Error('bad'); }
    res[v.name]!.push(cost.cpuMs);
    await sim.close();
  }
  console.log(r, variants.map((v) => `${v.name} ${res[v.name]!.at(-1)!.toFixed(0)} (${(res[v.name]!.at(-1)! / res.floor!.at(-1)!).toFixed(2)}x)`).join(' | '));
}
for (const v of variants) console.log(v.name.padEnd(12), 'median', median(res[v.name]!).toFixed(0), 'ratio-median', median(res[v.name]!.map((x, i) => x / res.floor![i]!)).toFixed(3), 'delta vs chatload median', median(res[v.name]!.map((x, i) => x - res[variants[1]!.name]![i]!)).toFixed(0));
