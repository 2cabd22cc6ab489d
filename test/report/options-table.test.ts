// The report's Options table shows the options as the user gave them (issue #34: a run that streamed and wrote its
// report read "--no-stream true" and "--no-report true"). A real run against the simulator, then its report.html.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { startSimulator } from '../../src/sim/index.js';
import { syntheticConversations, writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

/** The Options table's rows of report.html: [option, value, given/default]. */
function optionRows(html: string): string[][] {
  const table = /<h3>Options<\/h3>(.*?)<\/table>/s.exec(html)?.[1] ?? '';
  return [...table.matchAll(/<tr><th>(.*?)<\/th><td><pre class="value">(.*?)<\/pre><\/td><td>(.*?)<\/td><\/tr>/g)].map((m) => [m[1]!, m[2]!, m[3]!]);
}

test('a streamed run that wrote its report: --no-stream and --no-report read "not set"; given options come first, marked given', { timeout: 60_000 }, async () => {
  const sim = await startSimulator({ profile: 'cpu-tiny' });
  const dir = tempDir('options-table');
  try {
    const inputFile = writeDataset(dir, syntheticConversations({ count: 2, userTurns: () => 1 }));
    const result = await runBenchmark({ url: sim.url, inputFile, numClients: 2, outputDir: join(dir, 'out') });
    const rows = optionRows(readFileSync(result.files.html!, 'utf8'));
    const byOption = new Map(rows.map((r) => [r[0], r]));
    assert.deepEqual(byOption.get('--no-stream'), ['--no-stream', 'not set', 'default']);
    assert.deepEqual(byOption.get('--no-report'), ['--no-report', 'not set', 'default']);
    assert.deepEqual(byOption.get('--num-clients'), ['--num-clients', '2', 'given']);
    assert.deepEqual(byOption.get('--early-stop'), ['--early-stop', 'set', 'default']);
    const firstDefault = rows.findIndex((r) => r[2] === 'default');
    assert.ok(rows.slice(0, firstDefault).every((r) => r[2] === 'given') && rows.slice(firstDefault).every((r) => r[2] === 'default'), 'given ones first');
  } finally {
    await sim.close();
  }
});
