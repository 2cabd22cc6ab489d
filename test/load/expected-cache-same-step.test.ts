// Requests admitted in one engine step (their first tokens in one step): vLLM caches a block as it allocates it, so a
// request admitted after another in the step hits the prompt that step is computing (vllm/v1/core/kv_cache_manager.py
// allocate_slots -> cache_blocks; docs/design/prefix_caching.md "reused by other requests in the same batch"), the
// expected-cache model's `shared_from: schedule`. SGLang inserts a prompt into its radix tree after its prefill step,
// so batch-mates do not hit each other (`prefill`). The simulator schedules as vLLM does, or as SGLang with
// `cache_semantics: sglang`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { SAME_STEP_MS } from '../../src/cache-model/cache-index.js';
import { ExpectedCache } from '../../src/cache-model/expected-cache.js';
import type { SharedFrom } from '../../src/server-engine/cache-semantics.js';
import { startSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { defaultTokenCounter, encodePrompt, type ChatMessage } from '../../src/tokenizer/index.js';
import { writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

const SYSTEM = Array.from({ length: 400 }, (_, i) => `w${i % 89}q`).join(' ');

function promptOf(id: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `question ${id}: what now?` },
  ];
}

/** The block-aligned prefix two conversations' prompts share, as the template renders and the tokenizer encodes them. */
function sharedBlocksTokens(a: string, b: string, blockSize: number): number {
  const [pa, pb] = [a, b].map((id) => encodePrompt(defaultTokenCounter, promptOf(id)));
  let shared = 0;
  while (shared < pa!.length && pa![shared] === pb![shared]) shared++;
  return Math.floor(shared / blockSize) * blockSize;
}

/** Two requests with a common system prompt, their first tokens `apartMs` apart: the second's expected hit. */
async function secondHit(sharedFrom: SharedFrom, apartMs: number): Promise<number> {
  const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, sliceMs: 0, sharedFrom });
  const a = await model.begin({}, promptOf('a'), 8);
  const b = await model.begin({}, promptOf('b'), 8);
  model.prefilled(a, 100);
  model.prefilled(b, 100 + apartMs);
  await model.settled(a);
  await model.settled(b);
  assert.equal(a.hit.expected, 0, 'the first of the run hits nothing');
  return b.hit.expected;
}

describe('requests prefilled in one engine step', () => {
  test('the model: a batch-mate hits with vLLM\'s semantics (schedule), not with SGLang\'s (prefill); a later step hits with both', { timeout: 30_000 }, async () => {
    const shared = sharedBlocksTokens('a', 'b', 16);
    assert.ok(shared >= 400, `the prompts share ${shared} tokens`);
    assert.equal(await secondHit('schedule', 0), shared, 'vLLM: the same step');
    assert.equal(await secondHit('prefill', 0), 0, 'SGLang: the same step');
    assert.equal(await secondHit('prefill', SAME_STEP_MS / 2), 0, 'SGLang: the same step, read a little apart');
    for (const sharedFrom of ['schedule', 'prefill'] as const) assert.equal(await secondHit(sharedFrom, 25), shared, `${sharedFrom}: the next step`);
  });

  for (const { semantics, sharedFrom, hitters } of [
    { semantics: 'vllm', sharedFrom: 'schedule', hitters: 2 },
    { semantics: 'sglang', sharedFrom: 'prefill', hitters: 0 },
  ] as const) {
    test(`the simulator as ${semantics}: ${hitters} of three batch-mates hit the prefix their step computes, and the model expects exactly what each got`, { timeout: 60_000 }, async () => {
      // Steps of 1 s, and an unrelated request keeping the engine busy: the three requests, sent together, arrive
      // during one step and are admitted together in the next. (Steps of 200 ms were too short on a loaded machine:
      // two npm tests side by side spread the three sends over two steps.)
      const sim = await startSimulator({ profile: 'cpu-tiny', config: { step_base_ms: 1000, max_num_batched_tokens: 16384, cache_semantics: semantics } });
      const dir = tempDir('same-step');
      const stopBusy = new AbortController();
      try {
        // 60 steps at most: stopped once the run is done.
        const busy = await fetch(`${sim.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chatload-sim', stream: true, max_tokens: 60, messages: [{ role: 'user', content: 'something else entirely' }] }),
          signal: stopBusy.signal,
        });
        const ids = ['a', 'b', 'c'];
        const inputFile = writeDataset(dir, ids.map((id) => ({ id, messages: [...promptOf(id), { role: 'assistant' as const, content: 'fine' }] })));
        const result = await runBenchmark({ url: sim.url, inputFile, numClients: 3, outputDir: dir, limitMinTokens: 4, limitMaxTokens: 4 });
        assert.equal(busy.status, 200);
        const records = readRequestsJsonl(result.files.requests).sort((x, y) => x.first_token_at_ms! - y.first_token_at_ms!);
        assert.equal(records.length, 3);
        const steps = new Set(records.map((r) => r.first_token_at_ms));
        assert.equal(steps.size, 1, `one step: first tokens at ${[...steps].join(', ')} ms`);
        const cached = records.map((r) => r.cached_tokens);
        const shared = sharedBlocksTokens('a', 'b', 16);
        assert.equal(cached.filter((c) => c === shared).length, hitters, `batch-mates that hit the system prompt: cached ${cached.join(', ')}`);
        assert.equal(cached.filter((c) => c === 0).length, 3 - hitters, `the rest computed it: cached ${cached.join(', ')}`);
        for (const r of records) assert.equal(r.expected_cached_tokens, r.cached_tokens, `${r.conversation_id}: expected ${r.expected_cached_tokens}, cached ${r.cached_tokens}`);
        const model = (JSON.parse(readFileSync(result.files.results, 'utf8')) as { prefix_cache: { model: { semantics: { shared_from: string } } } }).prefix_cache.model;
        assert.equal(model.semantics.shared_from, sharedFrom);
      } finally {
        stopBusy.abort();
        await sim.close();
      }
    });
  }
});
