import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { readFileSync } from 'node:fs';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { abortAfterRecords, assertCountsAddUp } from '../helpers/executor-runs.js';
import { tempDir } from '../helpers/tmp.js';

// The open-sessions executor (load/executors/open-sessions.ts): its arrival rate, --max-queue's drops, and a stop.
describe('open-sessions executor', () => {
  let sim: RunningSimulator;
  before(async () => {
    // Every step takes at least 10 ms: a 20-token answer holds its slot for 200 ms or more, whatever the machine.
    sim = await startSimulator({ profile: 'cpu-tiny', config: { step_base_ms: 10 } });
  });
  after(async () => {
    await sim.close();
  });

  test('rate: a ramp-up brings sessions faster and faster (gaps shrink from the start rate to the end rate)', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-open-rate');
    const result = await runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 200, 1), rampUp: 'linear:10:100:2', durationSec: 2, limitMinTokens: 2, limitMaxTokens: 2, seed: 5, outputDir: join(dir, 'out') });
    const arrivals = readRequestsJsonl(result.files.requests).map((r) => r.scheduled_at_ms!).sort((a, b) => a - b);
    const inFirst = arrivals.filter((t) => t < 1000).length;
    const inSecond = arrivals.filter((t) => t >= 1000 && t < 2000).length;
    // Expected: 32.5 sessions in the first second (10 -> 55/s), 77.5 in the second (55 -> 100/s).
    assert.ok(inSecond > inFirst * 1.5, `${inFirst} then ${inSecond} arrivals`);
    assert.match(result.load.loadModel, /^open-sessions: .*ramp/);
  });

  test('drops: with --max-concurrency 1 --max-queue 0 a session arriving while the slot is busy is dropped, never queued', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-open-drop');
    const warnings: string[] = [];
    const result = await runBenchmark(
      { url: sim.url, inputFile: writeSyntheticDataset(dir, 30, 2), sessionRate: 50, maxConcurrency: 1, maxQueue: 0, limitMinTokens: 20, limitMaxTokens: 20, outputDir: join(dir, 'out') },
      { observer: { onWarning: (m) => warnings.push(m) } },
    );
    const records = readRequestsJsonl(result.files.requests);
    const c = result.load.conversations;
    assertCountsAddUp(result.load, 30);
    assert.ok(c.dropped > 0, JSON.stringify(c));
    assert.equal(c.completed + c.dropped + c.failed, 30, 'every session was either served to its end or dropped');
    assert.ok(records.every((r) => r.queue_ms === 0), 'nothing waited: a full queue of 0 drops');
    // At most one request in flight at any time.
    for (const r of records) assert.ok(records.filter((o) => o.sent_at_ms <= r.sent_at_ms && o.done_at_ms > r.sent_at_ms).length <= 1);
    // A dropped session sent nothing after its drop: it has fewer records than turns, or none.
    const results = JSON.parse(readFileSync(result.files.results, 'utf8')) as { dropped_requests: number; conversations: { dropped: number } };
    assert.equal(results.dropped_requests, c.dropped);
    assert.equal(results.conversations.dropped, c.dropped);
    assert.ok(warnings.some((w) => /dropped: .*--max-queue full/.test(w)), warnings.join('\n'));
    assert.match(result.load.loadModel, /at most 1 request in flight, 0 queued at most \(more dropped\)/);
  });

  test('drops: --max-queue 2 lets at most 2 requests wait at once; the rest are dropped', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-open-queue');
    const result = await runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 30, 1), sessionRate: 60, maxConcurrency: 1, maxQueue: 2, limitMinTokens: 20, limitMaxTokens: 20, outputDir: join(dir, 'out') });
    const records = readRequestsJsonl(result.files.requests);
    assertCountsAddUp(result.load, 30);
    assert.ok(result.load.conversations.dropped > 0);
    assert.ok(records.some((r) => r.queue_ms > 0), 'some waited');
    // Waiting intervals [sent - queue, sent): at no moment more than 2 of them overlap.
    const waits = records.filter((r) => r.queue_ms > 0).map((r) => [r.sent_at_ms - r.queue_ms, r.sent_at_ms] as const);
    for (const [start] of waits) {
      const waiting = waits.filter(([s, e]) => s <= start + 0.01 && e > start + 0.01).length;
      assert.ok(waiting <= 2, `${waiting} waiting at ${start}`);
    }
  });

  test('cancellation: a stop releases the queued sessions at once; every conversation is still accounted for', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-open-stop');
    const stop = abortAfterRecords(2);
    const result = await runBenchmark(
      { url: sim.url, inputFile: writeSyntheticDataset(dir, 40, 3), sessionRate: 100, maxConcurrency: 1, limitMinTokens: 20, limitMaxTokens: 20, outputDir: join(dir, 'out') },
      { signal: stop.controller.signal, observer: { onRecord: stop.onRecord } },
    );
    assert.equal(result.load.stopReason, 'interrupted');
    assertCountsAddUp(result.load, 40);
    assert.ok(result.load.conversations.unfinished + result.load.conversations.not_started > 0);
    // No request was sent after the stop (one may have been sent as it fired).
    const records = readRequestsJsonl(result.files.requests);
    const abortedAt = stop.abortedAt() - result.load.runStartMs;
    assert.ok(records.filter((r) => r.sent_at_ms > abortedAt + 1).length === 0, `sent after the stop at ${abortedAt}`);
  });
});
