import { join } from 'node:path';
import { syntheticConversations, writeDataset } from '../test/helpers/datasets.js';
import { tempDir } from '../test/helpers/tmp.js';
import { median } from './child-cpu.js';
import { startFirstRequestServer } from './first-request.js';
const work = tempDir('probe');
const dataset = writeDataset(work, syntheticConversations({ count: 250, userTurns: () => 6, prefixWords: 150, userWords: 40, answerWords: 60 }));
const stub = await startFirstRequestServer();
const bins = process.argv.slice(2);
const res = bins.map(() => [] as number[]);
for (let i = 0; i < 7; i++) for (const [k, bin] of bins.entries()) {
  const p = await stub.probe([bin, 'run', '-u', stub.url, '-i', dataset, '-p', '50', '-n', '1000', '--tokenizer', 'approx', '--limit-min-tokens', '-1', '--limit-max-tokens', '-1', '-q', '--output-dir', join(work, `o${i}${k}`)]);
  res[k]!.push(p.cpuMs);
}
for (const [k, bin] of bins.entries()) console.log(bin, median(res[k]!).toFixed(0), 'ms', res[k]!.map((x) => x.toFixed(0)).join(' '));
await stub.close();
