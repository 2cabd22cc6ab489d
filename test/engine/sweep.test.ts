import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runSweep } from '../../src/benchmark/sweep.js';
import { ConfigError } from '../../src/errors/index.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';


describe('sweep', () => {
  test('three load points write their runs, sweep.json and an HTML curve', { timeout: 60_000 }, async () => {
    const dir = tempDir('sweep');
    const result = await runSweep(
      { inputFile: writeSyntheticDataset(dir, 12, 3), maxNumRequests: 9, simProfile: 'cpu-tiny', outputDir: join(dir, 'out'), goodput: ['e2el:60000'] },
      { kind: 'concurrency', values: [1, 2, 3] },
    );
    assert.deepEqual(result.points.map((p) => p.value), [1, 2, 3]);
    for (const point of result.points) {
      assert.equal(point.summary.completed, 9);
      assert.ok(existsSync(join(point.outputDir, 'results.json')));
      assert.equal(point.meetsSlos, true);
    }
    const summary = JSON.parse(readFileSync(result.files.summary, 'utf8')) as { points: Array<{ value: number; request_throughput: number }> };
    assert.deepEqual(summary.points.map((p) => p.value), [1, 2, 3]);
    const html = readFileSync(result.files.html, 'utf8');
    for (const id of ['sweep-ttft', 'sweep-e2el', 'sweep-turns']) assert.match(html, new RegExp(`data-chart="${id}"[^]*?<svg`));
    assert.ok(!/<script/i.test(html), 'no script');
    assert.match(html, /<path[^>]+d="M/, 'the curves have data');
  });

  test('--search bisects the session rate against the SLOs', { timeout: 90_000 }, async () => {
    const dir = tempDir('search');
    // Every rate meets a generous SLO, so the search ends at the top of the range after two points.
    const result = await runSweep(
      { inputFile: writeSyntheticDataset(dir, 12, 3), durationSec: 0.5, simProfile: 'cpu-tiny', outputDir: join(dir, 'out'), goodput: ['e2el:60000'] },
      { kind: 'search', minRate: 2, maxRate: 8, steps: 3, targetShare: 0.9 },
    );
    assert.equal(result.bestRate, 8);
    assert.deepEqual(result.points.map((p) => p.value), [2, 8]);
    const none = await runSweep(
      { inputFile: writeSyntheticDataset(dir, 12, 3), durationSec: 0.3, simProfile: 'cpu-tiny', outputDir: join(dir, 'none'), goodput: ['ttft:0.001'] },
      { kind: 'search', minRate: 2, maxRate: 8, steps: 3, targetShare: 0.9 },
    );
    assert.equal(none.bestRate, null, 'no rate meets an impossible SLO');
    assert.equal(none.points.length, 1, 'the search stops at the lowest rate');
    await assert.rejects(
      runSweep({ simProfile: 'cpu-tiny', outputDir: join(dir, 'x') }, { kind: 'search', minRate: 1, maxRate: 2, steps: 1, targetShare: 0.9 }),
      (e: unknown) => e instanceof ConfigError && /--goodput/.test(e.message),
    );
  });
});
