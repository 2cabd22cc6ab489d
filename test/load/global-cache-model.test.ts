import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runBenchmark, type BenchmarkResult } from '../../src/benchmark/run-benchmark.js';
import { startSimulatorWorker, type RunningSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { filler, writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

/*
 * One expected-cache model at any client layout (issue #31): with --workers 2 the coordinator owns the run's one index,
 * fed by both workers' request events over their channels, so a prefix one worker sent is a hit for the other's
 * requests, as it is for the server. Runs against the simulator (one KV cache, like any server) over loopback HTTP.
 *
 * The dataset: 16 two-turn conversations sharing a ~2,000-token system prompt, except conversation 1, the first of
 * worker 1 (worker w owns conversations i with i % 2 = w): so worker 1 first sends the shared prompt after worker 0's
 * conversation 0 has had it cached. An index per worker missed it there (scope "per-worker", the model before this
 * change: the server served it, and the model counted those tokens as warm start), about 4 points of hit ratio.
 */
function dataset(dir: string): string {
  const system = filler(1000, 7);
  const conversations = Array.from({ length: 16 }, (_, i) => ({
    id: `c${i}`,
    messages: [
      { role: 'system' as const, content: i === 1 ? filler(1000, 11) : system },
      { role: 'user' as const, content: `question ${i}: ${filler(12, i)}` },
      { role: 'assistant' as const, content: filler(8, i + 100) },
      { role: 'user' as const, content: `and then ${i}: ${filler(12, i + 50)}` },
      { role: 'assistant' as const, content: filler(8, i + 200) },
    ],
  }));
  return writeDataset(dir, conversations);
}

describe('one expected-cache model with --workers (issue #31)', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulatorWorker({ profile: 'cpu-tiny', config: { step_base_ms: 10 } });
  });
  after(async () => {
    await sim.close();
  });

  const run = async (workers: number): Promise<BenchmarkResult> => {
    const dir = tempDir(`global-model-${workers}`);
    // Two clients: each worker's conversations one after another, in the same order with 1 worker or 2.
    return runBenchmark({ url: sim.url, inputFile: dataset(dir), numClients: 2, workers, earlyStop: false, resetPrefixCache: true, limitMinTokens: 8, limitMaxTokens: 8, outputDir: dir });
  };

  test('--workers 2: scope global, the expected hit ratio within 1 point of 1 worker, and the server agrees', { timeout: 120_000 }, async () => {
    const one = await run(1);
    const two = await run(2);
    const [a, b] = [one.prefixCache, two.prefixCache];
    assert.equal(a.model.scope, 'global');
    assert.equal(b.model.scope, 'global');
    assert.equal(b.totals.requests, 32);
    assert.equal(b.totals.input_tokens, a.totals.input_tokens, 'the same prompts');
    const ratio = (r: BenchmarkResult): number => r.prefixCache.totals.expected_hit_ratio!;
    assert.ok(Math.abs(ratio(two) - ratio(one)) <= 0.01, `expected hit ratio: 2 workers ${ratio(two)}, 1 worker ${ratio(one)}`);
    // The shared prompt worker 1 had not sent itself is expected there, as the server served it: no warm start
    // (an index per worker counted ~2,000 tokens of it as warm start), nothing missed beyond a batch's timing.
    assert.equal(b.totals.warm_start_tokens, 0);
    assert.ok(b.totals.efficiency! >= 0.98 && b.totals.efficiency! <= 1.02, `efficiency ${b.totals.efficiency}`);
    // The misses as with 1 worker: their causes add up, and they stay a small share of the expected either way.
    for (const r of [a, b]) {
      const misses = r.totals.misses!;
      assert.equal(Object.values(misses.causes).reduce((n, x) => n + x, 0), misses.tokens);
      assert.ok(misses.tokens <= 0.02 * r.totals.expected_cached_tokens, `missed ${misses.tokens} of ${r.totals.expected_cached_tokens}`);
    }
    // Worker 1's first shared-prompt request (conversation 3, turn 1) expects the prefix worker 0 sent.
    const records = readRequestsJsonl(two.files.requests);
    const c3 = records.find((r) => r.conversation_id === 'c3' && r.turn === 1)!;
    assert.ok(c3.expected_cached_tokens >= 1900, `c3 turn 1 expected ${c3.expected_cached_tokens}`);
    assert.equal(c3.expected_cached_tokens_own_history, 0);
    assert.ok(records.every((r) => r.cache_model_input_tokens !== null), 'every request has its figures');
  });
});
