import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runSweep } from '../../src/benchmark/sweep.js';
import { ConfigError } from '../../src/errors/index.js';
import { retentionLine } from '../../src/report/cache-pressure-chart.js';
import { startSimulator } from '../../src/sim/index.js';
import { oneShapeConversations, writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

// sweep --think-time LIST (issue #30): the server's prefix-cache hit ratio against the idle gap between a session's
// turns, beside the model's capacity curve, and the gap at which the server's cache stops holding a session. Sessions
// arrive at a fixed rate; the longer each idles between turns, the more sessions are live at once, and a KV cache of
// fixed size holds fewer of their prefixes.

/** `count` sessions of one shape: a unique ~800-token system prompt, then four short turns. */
const sessions = (count: number): object[] => oneShapeConversations(count, 'retention test');

test('sweep --think-time: the cache holds sessions with no idle gap and loses them at 2 s between turns; the model\'s capacity curve falls with it', { timeout: 180_000 }, async () => {
  // Sessions at 2/s with a cache of ~10 sessions' prefixes: with no idle gap at most a few are live at once even on a
  // loaded machine (at 4/s and ~8 sessions' room, a slow machine's longer sessions overflowed it); at 2 s between
  // turns ~16 are live, more than the cache holds.
  const sim = await startSimulator({ profile: 'cpu-tiny', config: { num_gpu_blocks: 640, step_base_ms: 10, max_num_batched_tokens: 16384 } });
  const dir = tempDir('retention');
  try {
    const inputFile = writeDataset(dir, sessions(16));
    const result = await runSweep(
      { url: sim.url, inputFile, outputDir: join(dir, 'out'), sessionRate: 2, limitMaxTokens: 16, limitMinTokens: 16, ignoreEos: true },
      { kind: 'think-time', values: [0, 2], cachePressure: { share: 0.9 } },
    );
    const retention = result.cachePressure!;
    const [idle0, idle2] = retention.curve;
    assert.equal(retention.knee.knee, 2, `the cache stops holding a session at 2 s: ${JSON.stringify(retention.curve)}`);
    assert.equal(retention.knee.holds_up_to, 0);
    assert.ok(idle0!.share_of_infinite! >= 0.9 && idle2!.share_of_infinite! < 0.9);
    // The model with the server's capacity (its /metrics) sees the same loss.
    assert.ok(idle2!.expected_hit_ratio! < idle0!.expected_hit_ratio!, `the capacity curve falls: ${idle0!.expected_hit_ratio} -> ${idle2!.expected_hit_ratio}`);
    const saved = JSON.parse(readFileSync(result.files.summary, 'utf8')) as { retention: { holds_idle_gap_sec: number; loses_at_idle_gap_sec: number }; cache_pressure: unknown };
    assert.deepEqual([saved.retention.holds_idle_gap_sec, saved.retention.loses_at_idle_gap_sec], [0, 2]);
    assert.equal(saved.cache_pressure, null);
    assert.match(readFileSync(result.files.html, 'utf8'), /Prefix-cache retention[^]*?Knee at 2 s between turns/);
    assert.match(retentionLine(retention.knee), /holds a session across idle gaps up to 0 s; at 2 s between turns the server no longer holds it/);
  } finally {
    await sim.close();
  }
});

test('sweep --think-time without --session-rate: one line, nothing run', { timeout: 30_000 }, async () => {
  const dir = tempDir('retention-closed');
  await assert.rejects(
    runSweep({ inputFile: writeDataset(dir, sessions(1)), outputDir: join(dir, 'out') }, { kind: 'think-time', values: [0, 1], cachePressure: { share: 0.9 } }),
    (error: Error) => error instanceof ConfigError && /add --session-rate R/.test(error.message),
  );
});
