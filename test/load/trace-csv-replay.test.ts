import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { loadDataset } from '../../src/conversation/load.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { FIXTURES, QWEN3_DIR } from '../helpers/tokenizers.js';
import { tempDir } from '../helpers/tmp.js';

/*
 * Azure LLM inference and BurstGPT traces (CSV, no prefix structure) replayed against the simulator over loopback:
 * a 5-second window at the trace's own pace, every request in it sent at its timestamp and completed.
 */
describe('CSV trace replay against the simulator', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny', tokenizer: QWEN3_DIR, config: { block_size: 16 } });
  });
  after(async () => {
    await sim.close();
  });

  test('an Azure trace: every request of a 5-second window completes, at its timestamp, its prompt at the exact token count, no prefix shared', { timeout: 60_000 }, async () => {
    const file = join(FIXTURES, 'azure-2023-sample.csv');
    const dir = tempDir('azure-replay');
    const result = await runBenchmark({ url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceWindow: '0:5', resetPrefixCache: true, outputDir: dir });
    const window = (await loadDataset(file, { trace: { window: { startSec: 0, endSec: 5 } } })).conversations.map((c) => c.trace!.turns[0]!);
    assert.ok(window.length >= 10, `${window.length} requests in the window`);
    const records = readRequestsJsonl(result.files.requests).sort((a, b) => a.scheduled_at_ms! - b.scheduled_at_ms!);
    assert.equal(records.length, window.length);
    assert.ok(records.every((r) => r.status === 'ok'), 'every request completed');
    const origin = records[0]!.scheduled_at_ms!;
    records.forEach((r, i) => assert.ok(Math.abs(r.scheduled_at_ms! - origin - window[i]!.atMs!) < 0.01, `request ${i}: ${r.scheduled_at_ms! - origin} vs ${window[i]!.atMs}`));
    // The chat template adds the same few tokens to every prompt; the rest is ContextTokens exactly.
    const overhead = records.map((r, i) => r.input_num_tokens - window[i]!.inputLength);
    assert.ok(overhead.every((n) => n === overhead[0] && n >= 0 && n < 16), `${overhead}`);
    assert.deepEqual(records.map((r) => r.max_tokens), window.map((t) => t.outputLength));
    // No shared prefix: nothing expected cached, and the server caches no more than its template's first block.
    assert.equal(records.reduce((n, r) => n + r.expected_cached_tokens, 0), 0);
    assert.ok(records.every((r) => (r.cached_tokens ?? 0) <= 16), `${records.map((r) => r.cached_tokens)}`);
  });

  test('a BurstGPT trace with --trace-filter and --trace-speed: the window completes, failed rows skipped and said so', { timeout: 60_000 }, async () => {
    const file = join(FIXTURES, 'burstgpt-sample.csv');
    const dir = tempDir('burstgpt-replay');
    const result = await runBenchmark({ url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceWindow: '5:15', traceSpeed: 2, traceFilter: 'model=ChatGPT', outputDir: dir });
    const loaded = await loadDataset(file, { trace: { window: { startSec: 5, endSec: 15 }, filter: { models: ['chatgpt'], failed: 'skip' } } });
    const records = readRequestsJsonl(result.files.requests).sort((a, b) => a.scheduled_at_ms! - b.scheduled_at_ms!);
    assert.equal(records.length, loaded.conversations.length);
    assert.ok(records.length >= 5, `${records.length}`);
    assert.ok(records.every((r) => r.status === 'ok'));
    // 10 s of trace at 2x: the last request goes 5 s or less after the first.
    const span = records.at(-1)!.scheduled_at_ms! - records[0]!.scheduled_at_ms!;
    const traceSpan = loaded.conversations.at(-1)!.trace!.turns[0]!.atMs! - loaded.conversations[0]!.trace!.turns[0]!.atMs!;
    assert.ok(Math.abs(span - traceSpan / 2) < 0.01, `${span} vs ${traceSpan / 2}`);
    assert.ok(result.warnings.some((w) => /burstgpt trace: 30 rows; \d+ failed requests? skipped \(zero output tokens/.test(w)), result.warnings.join('\n'));
  });
});
