import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runSweep } from '../../src/benchmark/sweep.js';
import { startSimulator } from '../../src/sim/index.js';
import { oneShapeConversations, writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

test('sweep --cache-pressure against a simulator with a small KV cache finds the knee within one step of capacity ÷ tokens per live conversation', { timeout: 180_000 }, async () => {
  const blocks = 400; // 6,400 tokens of KV
  // Steps of 10 ms, as a GPU's, with no chunked prefill: the expected model tells batched requests from queued ones (see expected-cache.test.ts).
  const sim = await startSimulator({ profile: 'cpu-tiny', config: { num_gpu_blocks: blocks, step_base_ms: 10, max_num_batched_tokens: 16384 } });
  const dir = tempDir('cache-pressure');
  try {
    // Conversations of one shape: a unique ~800-token system prompt, then four short turns.
    const inputFile = writeDataset(dir, oneShapeConversations(28, 'pressure test'));
    // The analytic knee is ~6.7 conversations (the dataset is seeded), so a knee past 8 fails the check below anyway:
    // points beyond 8 would only cost time.
    const steps = [2, 4, 6, 8];
    const result = await runSweep(
      { url: sim.url, inputFile, outputDir: join(dir, 'out'), limitMaxTokens: 16, limitMinTokens: 16, ignoreEos: true },
      { kind: 'concurrency', values: steps, cachePressure: { share: 0.9 } },
    );
    const pressure = result.cachePressure!;
    assert.equal(pressure.knee.capacity_tokens, blocks * 16, 'the capacity came from the simulator\'s /metrics');
    const analytic = pressure.knee.analytic_conversations!;
    assert.ok(pressure.knee.knee !== null, `a knee was found: ${JSON.stringify(pressure.curve)}`);
    // Within one step (2 clients) of the analytic knee, capacity ÷ mean tokens of a live conversation.
    assert.ok(Math.abs(pressure.knee.knee - analytic) <= 2, `knee ${pressure.knee.knee} against analytic ${analytic.toFixed(2)}: ${JSON.stringify(pressure.curve)}`);
    // Below the knee the server kept what an infinite cache would; at it, it lost much of it.
    for (const p of pressure.curve) {
      if (p.value < pressure.knee.knee) assert.ok(p.share_of_infinite! >= 0.9, `${p.value}: ${p.share_of_infinite}`);
    }
    const saved = JSON.parse(readFileSync(result.files.summary, 'utf8')) as { cache_pressure: { knee: { knee: number } } };
    assert.equal(saved.cache_pressure.knee.knee, pressure.knee.knee);
    const html = readFileSync(result.files.html, 'utf8');
    assert.match(html, /data-chart="sweep-cache-pressure"[^]*?<svg/);
    assert.match(html, /holds up to ~\d+/);
  } finally {
    await sim.close();
  }
});
