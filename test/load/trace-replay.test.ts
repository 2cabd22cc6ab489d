import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { loadDataset } from '../../src/conversation/load.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { traceStats } from '../../src/synth/trace-stats.js';
import { FIXTURES, QWEN3_DIR } from '../helpers/tokenizers.js';
import { tempDir } from '../helpers/tmp.js';
import { writeMooncakeTrace } from '../helpers/traces.js';

describe('trace replay against the simulator', () => {
  let sim: RunningSimulator;
  before(async () => {
    // The simulator's KV blocks are the trace's: 16 tokens.
    sim = await startSimulator({ profile: 'cpu-tiny', tokenizer: QWEN3_DIR, config: { block_size: 16 } });
  });
  after(async () => {
    await sim.close();
  });

  test("the simulator's cached tokens equal the trace's hash-id prediction within 1%, and the run's expected cache is that prediction", { timeout: 60_000 }, async () => {
    const dir = tempDir('trace-cache');
    const file = writeMooncakeTrace(dir, { rows: 150, blockSize: 16, gapMs: 8, seed: 4 });
    const result = await runBenchmark({ url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceBlockSize: 16, traceSpeed: 2, maxConcurrency: 1, resetPrefixCache: true, outputDir: join(dir, 'out') });
    const records = readRequestsJsonl(result.files.requests);
    assert.equal(records.length, 150);
    assert.ok(records.every((r) => r.status === 'ok'));
    const predicted = traceStats((await loadDataset(file, { trace: { blockSize: 16 } })).conversations).infinite;
    assert.ok(predicted.hitTokens > 1000, `the trace shares prefixes (${predicted.hitTokens} tokens)`);
    const expected = records.reduce((n, r) => n + r.expected_cached_tokens, 0);
    assert.equal(expected, predicted.hitTokens, 'the run reports the same theoretical hits as trace stats');
    const cached = records.reduce((n, r) => n + r.cached_tokens!, 0);
    assert.ok(Math.abs(cached - predicted.hitTokens) <= 0.01 * predicted.hitTokens, `simulator ${cached} vs predicted ${predicted.hitTokens}`);
  });

  test('requests go at their timestamps divided by --trace-speed; a session turn goes its delay after the previous answer', { timeout: 30_000 }, async () => {
    const dir = tempDir('trace-schedule');
    const result = await runBenchmark({ url: sim.url, inputFile: join(FIXTURES, 'mooncake-sample.jsonl'), tokenizer: QWEN3_DIR, traceSpeed: 2, outputDir: dir });
    assert.match(result.load.loadModel, /^fixed-schedule: the trace's timestamps at 2x speed/);
    const records = readRequestsJsonl(result.files.requests);
    assert.equal(records.length, 10);
    const firsts = records.filter((r) => r.turn === 1).sort((a, b) => a.scheduled_at_ms! - b.scheduled_at_ms!);
    const loaded = await loadDataset(join(FIXTURES, 'mooncake-sample.jsonl'));
    const starts = loaded.conversations.map((c) => c.trace!.turns[0]!.atMs! / 2);
    const origin = firsts[0]!.scheduled_at_ms!;
    firsts.forEach((r, i) => assert.ok(Math.abs(r.scheduled_at_ms! - origin - starts[i]!) < 0.01, `session ${i}: ${r.scheduled_at_ms! - origin} vs ${starts[i]}`));
    const s1 = records.filter((r) => r.conversation_id === 's1').sort((a, b) => a.turn - b.turn);
    assert.equal(s1.length, 3);
    // Turn 2 is due 200 ms (trace) = 100 ms after turn 1's answer, turn 3 50 ms after turn 2's (counted from when the
    // client saw the answer end, a moment after its last byte: no upper bound on a loaded machine).
    assert.ok(s1[1]!.scheduled_at_ms! >= s1[0]!.done_at_ms + 100 - 0.01, `${s1[1]!.scheduled_at_ms} vs ${s1[0]!.done_at_ms}`);
    assert.ok(s1[2]!.scheduled_at_ms! >= s1[1]!.done_at_ms + 50 - 0.01);
    // The session keeps its history: turn 3's prompt holds turns 1 and 2 and their answers.
    assert.ok(s1[2]!.input_num_tokens > 700 + 300 + 250, `${s1[2]!.input_num_tokens}`);
    assert.equal(s1[2]!.input_num_turns, 5);
    // output_length is sent as max_tokens.
    assert.deepEqual(s1.map((r) => r.max_tokens), [16, 10, 10]);
    // The pre-formatted prompt went as it is: two messages.
    assert.equal(records.find((r) => r.conversation_id === 's2')!.input_num_turns, 2);
  });

  test('Bailian turns are self-contained: each prompt is its own input_length, sent at its timestamp', { timeout: 30_000 }, async () => {
    const dir = tempDir('trace-bailian');
    const result = await runBenchmark({ url: sim.url, inputFile: join(FIXTURES, 'bailian-sample.jsonl'), tokenizer: QWEN3_DIR, traceSpeed: 4, outputDir: dir });
    const records = readRequestsJsonl(result.files.requests);
    const chat = records.filter((r) => r.conversation_id === 'chat-1').sort((a, b) => a.turn - b.turn);
    assert.equal(chat.length, 3);
    assert.deepEqual(chat.map((r) => r.input_num_turns), [1, 1, 1]);
    // Qwen3's template adds the same few tokens to each prompt of 40, 90 and 130 tokens.
    const overhead = chat.map((r, i) => r.input_num_tokens - [40, 90, 130][i]!);
    assert.ok(overhead.every((n) => n === overhead[0] && n > 0 && n < 16), `${overhead}`);
    // Turn 3 is due at 1.2 s / 4 after turn 1, unless turn 2's answer came later (a loaded machine): then at that answer.
    const due = chat[0]!.scheduled_at_ms! + 300;
    const at = chat[2]!.scheduled_at_ms!;
    assert.ok(Math.abs(at - due) < 0.01 || (at > due && at >= chat[1]!.done_at_ms), `turn 3 scheduled ${at}, due ${due}, turn 2 answered at ${chat[1]!.done_at_ms}`);
    assert.equal(result.load.conversations.completed, 4);
  });

  test('-p given with a trace replay is said to be ignored at the start (the trace is the load); a default -p says nothing', { timeout: 30_000 }, async () => {
    const dir = tempDir('trace-p');
    const file = writeMooncakeTrace(dir, { rows: 4, blockSize: 16, gapMs: 0, seed: 7 });
    const said: string[] = [];
    await runBenchmark({ url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceBlockSize: 16, numClients: 8, outputDir: join(dir, 'given') }, { observer: { onWarning: (m) => said.push(m) } });
    assert.ok(said.some((m) => /^-p\/--num-clients 8 is ignored with a trace replay: the trace's timestamps are the load/.test(m)), said.join('\n'));
    const quiet: string[] = [];
    await runBenchmark({ url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceBlockSize: 16, outputDir: join(dir, 'default') }, { observer: { onWarning: (m) => quiet.push(m) } });
    assert.ok(!quiet.some((m) => /num-clients/.test(m)), quiet.join('\n'));
  });

  test('--max-concurrency caps the requests in flight; the wait is queue time', { timeout: 30_000 }, async () => {
    const dir = tempDir('trace-cap');
    const file = writeMooncakeTrace(dir, { rows: 12, blockSize: 16, gapMs: 0, seed: 2 });
    const result = await runBenchmark({ url: sim.url, inputFile: file, tokenizer: QWEN3_DIR, traceBlockSize: 16, maxConcurrency: 2, ignoreEos: true, outputDir: join(dir, 'out') });
    const records = readRequestsJsonl(result.files.requests);
    assert.equal(records.length, 12);
    for (const r of records) {
      const inFlight = records.filter((o) => o.sent_at_ms <= r.sent_at_ms && o.done_at_ms > r.sent_at_ms).length;
      assert.ok(inFlight <= 2, `${inFlight} in flight at ${r.sent_at_ms}`);
    }
    assert.ok(records.some((r) => r.queue_ms > 0));
    assert.ok(records.every((r) => r.schedule_lag_ms! >= r.queue_ms - 1));
  });

  test('--max-concurrency with a closed loop over a dataset that is no trace is refused once the dataset is read', { timeout: 30_000 }, async () => {
    const dir = tempDir('trace-notrace');
    const { writeSyntheticDataset } = await import('../helpers/datasets.js');
    await assert.rejects(
      runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 2, 1), maxConcurrency: 2, outputDir: join(dir, 'out') }),
      /--max-concurrency: applies to open-loop sessions and trace replay/,
    );
  });
});
