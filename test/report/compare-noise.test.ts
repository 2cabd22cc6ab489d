import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { compareRuns, configDifferences, formatComparison, renderCompareHtml, runCaveat } from '../../src/report/compare.js';
import { beyondNoise, percentileHalfWidth } from '../../src/report/noise.js';
import { repeatIntervals } from '../../src/report/repeats.js';
import { summarize } from '../../src/metrics/summary.js';
import type { RunPrefixCache } from '../../src/metrics/prefix-cache-tally.js';
import { loadRunData, type RunData } from '../../src/store/run-data.js';
import { runCli } from '../helpers/cli.js';
import { syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

const RED = '\x1b[31m';
const GREEN = '\x1b[32m';

/** Loads runs written from synthetic records at these latency scales, with these configs. */
async function runsAt(root: string, scales: number[], configs: Array<Record<string, unknown>> = []): Promise<RunData[]> {
  const runs: RunData[] = [];
  for (const [i, scale] of scales.entries()) {
    const dir = join(root, `run-${i}`);
    mkdirSync(dir);
    writeRunDir(dir, syntheticRecords({ latencyScale: scale, conversations: 20, failEvery: 0 }), { config: configs[i] ?? { numClients: 3 } });
    runs.push(await loadRunData(dir));
  }
  return runs;
}

/** The line of `key` in a colour comparison table. */
function line(text: string, key: string): string {
  return text.split("\n").find((l) => l.includes(` ${key} `))!;
}

describe('compare: the noise band', { timeout: 60_000 }, () => {
  test('a change inside both runs\' spread stays uncoloured; a 2x change is red', async () => {
    const root = tempDir('compare-noise');
    try {
      const runs = await runsAt(root, [1, 1.002, 2]);
      const rows = compareRuns(runs);
      const tpot = rows.find((r) => r.key === 'tpot p50')!;
      assert.ok(tpot.noise.every((h) => h !== null && h > 0), 'each run has a band');
      const text = formatComparison(runs, { color: true });
      const tpotLine = line(text, 'tpot p50');
      const cells = tpotLine.split('│');
      // +0.2%: within the band, no colour; 2x: red (worse).
      assert.ok(!cells.slice(4, 7).join('').includes(RED) && !cells.slice(4, 7).join('').includes(GREEN), tpotLine);
      assert.ok(cells.slice(7, 10).join('').includes(RED), tpotLine);
      assert.match(text, /coloured only beyond both runs' 95% noise band/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('percentile and combined bands', () => {
    const sorted = Float64Array.from({ length: 1000 }, (_, i) => i);
    // p50 of 0..999 at n = 1000: q ± 1.96·√(0.25/1000) = ±0.031 → values 469..531: half-width ~31.
    assert.ok(Math.abs(percentileHalfWidth(sorted, 50)! - 31) < 1);
    assert.equal(beyondNoise(10, 12, 1, 1), true);
    assert.equal(beyondNoise(10, 11, 1, 1), false);
    assert.equal(beyondNoise(10, 12, null, 1), null);
  });

  test('options that differ, by flag name; a run cut short is flagged', async () => {
    const root = tempDir('compare-config');
    try {
      const runs = await runsAt(root, [1, 1], [{ numClients: 3, outputDir: 'a' }, { numClients: 8, outputDir: 'b' }]);
      assert.deepEqual(configDifferences(runs), [{ flag: '--num-clients', values: ['3', '8'] }], 'output places left out');
      // Runs whose expected-cache models followed different rules (a run from before schema 1.2.0 took vLLM's
      // batch-mates not to share): said with the options, since efficiency then compares two rules.
      const modelled = (shared_from: 'schedule' | 'prefill'): RunData => ({
        ...runs[0]!,
        prefixCache: { model: { block_size: 16, capacity_model: 'infinite', capacity_tokens: null, capacity_source: null, scope: 'global', semantics: { engine: 'vllm', block_size: 16, shared_from, slots: null, sources: [] } } } as unknown as RunPrefixCache,
      });
      assert.deepEqual(configDifferences([modelled('prefill'), modelled('schedule')]), [
        { flag: 'expected-cache semantics (prefix_cache.model.semantics)', values: ['vllm, 16-token blocks, shared_from prefill', 'vllm, 16-token blocks, shared_from schedule'] },
      ]);
      assert.deepEqual(configDifferences([modelled('schedule'), modelled('schedule')]), []);
      // A value read back from a results.json reaches the terminal escaped.
      const tampered: RunData = { ...runs[0]!, config: { ...runs[0]!.config, model: 'm\x1b]0;owned\x07' } };
      const text = formatComparison([runs[0]!, tampered], { color: false });
      assert.ok(!text.includes('\x1b') && !text.includes('\x07'), 'no raw control character');
      assert.match(text, /m\\x1b\]0;owned\\x07/);
      const cut: RunData = { ...runs[1]!, facts: { ...runs[1]!.facts, stop_reason: 'interrupted' } };
      assert.equal(runCaveat(runs[0]!), undefined);
      assert.equal(runCaveat(cut), 'stopped early: interrupted');
      const html = renderCompareHtml([runs[0]!, cut]);
      assert.match(html, /Not every run finished as asked/);
      assert.match(html, /<th>--num-clients<\/th>/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a --repeat folder compares by its means, with its interval as the band', async () => {
    const root = tempDir('compare-repeat');
    try {
      const rep = join(root, 'rep');
      mkdirSync(rep);
      const dirs = [1, 1.1, 1.2].map((scale, i) => {
        const dir = join(rep, `repeat-${i + 1}`);
        mkdirSync(dir);
        writeRunDir(dir, syntheticRecords({ latencyScale: scale, conversations: 20, failEvery: 0 }));
        return dir;
      });
      const summaries = [1, 1.1, 1.2].map((scale) => summarize(syntheticRecords({ latencyScale: scale, conversations: 20, failEvery: 0 })));
      const intervals = repeatIntervals(summaries);
      writeFileSync(join(rep, 'repeats.json'), JSON.stringify({ repeat: 3, runs: dirs, metrics: intervals }));
      const other = join(root, 'other');
      mkdirSync(other);
      writeRunDir(other, syntheticRecords({ latencyScale: 1, conversations: 20, failEvery: 0 }));
      const result = await runCli(['compare', rep, other]);
      assert.equal(result.code, 0, result.stderr);
      const mean = intervals.find((m) => m.key === 'ttft p50')!.mean!;
      assert.ok(line(result.stdout, 'ttft p50').includes(mean.toFixed(2)), `the mean ${mean.toFixed(2)}: ${line(result.stdout, 'ttft p50')}`);
      assert.match(result.stdout, /rep: .* \(--repeat: means across its repetitions/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
