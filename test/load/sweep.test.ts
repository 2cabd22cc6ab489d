import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runSweep } from '../../src/benchmark/sweep.js';
import { ConfigError } from '../../src/errors/index.js';
import { startSimulator } from '../../src/sim/index.js';
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

  test('--repeat runs each point N times and writes each metric\'s mean and 95% interval per point', { timeout: 60_000 }, async () => {
    const dir = tempDir('sweep-repeat');
    const result = await runSweep(
      { inputFile: writeSyntheticDataset(dir, 6, 2), maxNumRequests: 4, simProfile: 'cpu-tiny', outputDir: join(dir, 'out') },
      { kind: 'concurrency', values: [1, 2], repeat: 2 },
    );
    type Interval = { key: string; values: Array<number | null>; mean: number | null; ci95_half_width: number | null };
    const summary = JSON.parse(readFileSync(result.files.summary, 'utf8')) as {
      plan: { repeat: number };
      points: Array<{ value: number; output_dir: string; repeats: { runs: string[]; metrics: Interval[] } | null }>;
    };
    assert.equal(summary.plan.repeat, 2);
    assert.deepEqual(summary.points.map((p) => p.value), [1, 2]);
    for (const point of summary.points) {
      assert.ok(point.repeats !== null, 'each point has its intervals');
      assert.deepEqual(point.repeats.runs, [join(point.output_dir, 'repeat-1'), join(point.output_dir, 'repeat-2')]);
      for (const run of point.repeats.runs) assert.ok(existsSync(join(run, 'results.json')), `${run} is a complete run`);
      assert.ok(existsSync(join(point.output_dir, 'repeats.json')), 'the point folder reads as a run --repeat folder');
      const throughput = point.repeats.metrics.find((m) => m.key === 'request_throughput')!;
      const ttft = point.repeats.metrics.find((m) => m.key === 'ttft p50')!;
      for (const m of [throughput, ttft]) {
        assert.equal(m.values.length, 2);
        assert.ok(m.values.every((v) => v !== null && v > 0));
        assert.ok(Math.abs(m.mean! - (m.values[0]! + m.values[1]!) / 2) < 1e-9, 'the mean of the two repetitions');
        assert.ok(m.ci95_half_width !== null && m.ci95_half_width >= 0, 'two repetitions give an interval');
      }
    }
    const html = readFileSync(result.files.html, 'utf8');
    assert.match(html, /\d ± \d/, 'the page shows a mean with its interval');
    assert.match(html, /href="01-concurrency-1\/repeat-1\/report.html"/);
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

  test('sweep.html and sweep.json name the server (its password redacted), the model and the date (issue #34)', { timeout: 60_000 }, async () => {
    const dir = tempDir('sweep-heading');
    const sim = await startSimulator({ profile: 'cpu-tiny' });
    try {
      const url = new URL(sim.url);
      url.username = 'bench';
      url.password = 'hunter2';
      const before = Date.now();
      const result = await runSweep({ url: url.href, inputFile: writeSyntheticDataset(dir, 4, 2), maxNumRequests: 2, outputDir: join(dir, 'out') }, { kind: 'concurrency', values: [1] });
      const shown = url.href.replace('hunter2', '[redacted]');
      const doc = JSON.parse(readFileSync(result.files.summary, 'utf8')) as { url: string; model: string; created_at: string };
      const model = (JSON.parse(readFileSync(join(result.points[0]!.outputDir, 'results.json'), 'utf8')) as { model: string }).model;
      assert.equal(doc.url, shown);
      assert.equal(doc.model, model);
      assert.ok(Date.parse(doc.created_at) >= Math.floor(before / 1000) * 1000 && Date.parse(doc.created_at) <= Date.now(), doc.created_at);
      const html = readFileSync(result.files.html, 'utf8');
      const header = /<header>([^]*?)<\/header>/.exec(html)?.[1] ?? '';
      assert.ok(header.includes(`<h1>chatload sweep: ${model}</h1>`), header);
      assert.ok(header.includes(`server ${shown} · clients: 1 · created ${doc.created_at}`), header);
      assert.ok(!html.includes('hunter2'), 'the password is nowhere on the page');
    } finally {
      await sim.close();
    }
  });
});
