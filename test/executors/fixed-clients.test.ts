import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { Rng } from '../../src/util/rng.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { abortAfterRecords, assertCountsAddUp } from '../helpers/executor-runs.js';
import { tempDir } from '../helpers/tmp.js';

// The fixed-clients executor (load/executors/fixed-clients.ts): --request-rate's pacing, a closed loop that never
// drops, and a stop.
describe('fixed-clients executor', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny' });
  });
  after(async () => {
    await sim.close();
  });

  test("rate: --request-rate paces each client on its own seeded Poisson schedule, the request's duration absorbed", { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-fixed-rate');
    const rate = 40;
    const result = await runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 8, 3), numClients: 2, requestRate: rate, earlyStop: false, seed: 9, limitMinTokens: 2, limitMaxTokens: 2, outputDir: join(dir, 'out') });
    const records = readRequestsJsonl(result.files.requests);
    assert.equal(records.length, 24);
    for (const client of [0, 1]) {
      const times = records.filter((r) => r.client_id === client).map((r) => r.scheduled_at_ms!).sort((a, b) => a - b);
      // The client's Rng (derived from the seed and its id) draws only the gaps here: round-robin sampling, no retries.
      const rng = Rng.derive(9, client + 1);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      gaps.forEach((gap, i) => assert.ok(Math.abs(gap - rng.exponential(1000 / rate)) < 0.01, `client ${client} gap ${i}: ${gap}`));
    }
    assert.match(result.load.loadModel, /^fixed-clients: 2 clients, .* 40 req\/s per client$/);
  });

  test('drops: a closed loop never drops; --max-queue without --max-concurrency is refused before anything is sent', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-fixed-drop');
    const result = await runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 6, 2), numClients: 3, outputDir: join(dir, 'out') });
    assertCountsAddUp(result.load, 6);
    assert.equal(result.load.conversations.dropped, 0);
    assert.equal(result.load.conversations.completed, 6);
    await assert.rejects(runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 2, 1), maxQueue: 4, outputDir: join(dir, 'out2') }), /--max-queue: bounds the wait for a --max-concurrency slot/);
  });

  test('cancellation: a stop lets each client finish its request in flight and send no more; counts add up', { timeout: 60_000 }, async () => {
    const dir = tempDir('exec-fixed-stop');
    const stop = abortAfterRecords(5);
    const result = await runBenchmark(
      { url: sim.url, inputFile: writeSyntheticDataset(dir, 20, 4), numClients: 4, limitMinTokens: 30, limitMaxTokens: 30, outputDir: join(dir, 'out') },
      { signal: stop.controller.signal, observer: { onRecord: stop.onRecord } },
    );
    assert.equal(result.load.stopReason, 'interrupted');
    assertCountsAddUp(result.load, 20);
    const records = readRequestsJsonl(result.files.requests);
    const abortedAt = stop.abortedAt() - result.load.runStartMs;
    assert.ok(records.length >= 5 && records.length <= 5 + 4, `${records.length} records: the 5 before the stop and at most one in flight per client`);
    assert.equal(records.filter((r) => r.sent_at_ms > abortedAt + 1).length, 0);
  });
});
