import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { abortAfterRecords, assertCountsAddUp } from '../helpers/executor-runs.js';
import { QWEN3_DIR } from '../helpers/tokenizers.js';
import { tempDir } from '../helpers/tmp.js';
import { writeMooncakeTrace } from '../helpers/traces.js';

// The fixed-schedule executor (load/executors/fixed-schedule.ts): a trace's timestamps under --trace-speed, --max-queue's
// drops, and a stop.
describe('fixed-schedule executor', () => {
  let sim: RunningSimulator;
  before(async () => {
    // The trace's 16-token blocks; every step at least 10 ms, so a request holds its slot for a while on any machine.
    sim = await startSimulator({ profile: 'cpu-tiny', tokenizer: QWEN3_DIR, config: { block_size: 16, step_base_ms: 10 } });
  });
  after(async () => {
    await sim.close();
  });

  test('rate: rows 40 ms apart at --trace-speed 4 are scheduled 10 ms apart', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-trace-rate');
    const file = writeMooncakeTrace(dir, { rows: 12, blockSize: 16, gapMs: 40, seed: 3 });
    const result = await runBenchmark({ url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceBlockSize: 16, traceSpeed: 4, outputDir: join(dir, 'out') });
    const times = readRequestsJsonl(result.files.requests).map((r) => r.scheduled_at_ms!).sort((a, b) => a - b);
    assert.equal(times.length, 12);
    times.slice(1).forEach((t, i) => assert.ok(Math.abs(t - times[i]! - 10) < 0.01, `gap ${i}: ${t - times[i]!}`));
  });

  test('drops: a burst over --max-concurrency 1 --max-queue 1 sends one, queues one, and drops the rest', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-trace-drop');
    // 10 rows at the same timestamp, each its own session.
    const file = writeMooncakeTrace(dir, { rows: 10, blockSize: 16, gapMs: 0, seed: 4 });
    const result = await runBenchmark({ url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceBlockSize: 16, maxConcurrency: 1, maxQueue: 1, ignoreEos: true, outputDir: join(dir, 'out') });
    const records = readRequestsJsonl(result.files.requests);
    assertCountsAddUp(result.load, 10);
    assert.equal(records.length, 2, 'one in flight and one waiting; the other 8 arrived to a full queue');
    assert.equal(result.load.conversations.dropped, 8);
    assert.equal(records.filter((r) => r.queue_ms > 0).length, 1);
  });

  test('cancellation: a stop ends the replay before the later rows are due; every session is accounted for', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-trace-stop');
    // Rows 200 ms apart: the stop after the first answer comes long before the last row is due (1.8 s).
    const file = writeMooncakeTrace(dir, { rows: 10, blockSize: 16, gapMs: 200, seed: 5 });
    const stop = abortAfterRecords(1);
    const result = await runBenchmark(
      { url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceBlockSize: 16, outputDir: join(dir, 'out') },
      { signal: stop.controller.signal, observer: { onRecord: stop.onRecord } },
    );
    assert.equal(result.load.stopReason, 'interrupted');
    assertCountsAddUp(result.load, 10);
    assert.ok(result.load.conversations.not_started > 0, JSON.stringify(result.load.conversations));
    const records = readRequestsJsonl(result.files.requests);
    assert.ok(records.length < 10);
  });
});
