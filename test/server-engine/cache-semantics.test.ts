// Each engine's cache semantics as a run reads them from the server, whose token ids the expected cache counts in,
// and what a run says when its counts cannot be compared with the server's (issue #30).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { ConfigError } from '../../src/errors/index.js';
import type { RunPrefixCache } from '../../src/metrics/prefix-cache-tally.js';
import { formatSummary } from '../../src/report/terminal.js';
import { cacheSemantics } from '../../src/server-engine/cache-semantics.js';
import { startSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { defaultTokenCounter, encodePrompt, type ChatMessage } from '../../src/tokenizer/index.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { startSglangServer, startVllmServer } from '../helpers/engine-servers.js';
import { startVllmTokenIdsServer } from '../helpers/vllm-token-ids-server.js';
import { tempDir } from '../helpers/tmp.js';

function prefixCacheOf(path: string): RunPrefixCache & Record<string, unknown> {
  return (JSON.parse(readFileSync(path, 'utf8')) as { prefix_cache: RunPrefixCache & Record<string, unknown> }).prefix_cache;
}

describe("each engine's cache semantics, from the server (issue #30)", () => {
  test('SGLang: the block is its page_size from GET /server_info, and 1 (its default) when the server does not say', { timeout: 30_000 }, async () => {
    for (const pageSize of [64, undefined]) {
      const server = await startSglangServer({ pageSize });
      const dir = tempDir('sglang-page');
      try {
        const result = await runBenchmark({ url: server.url, inputFile: writeSyntheticDataset(dir, 1, 2), outputDir: join(dir, 'out') });
        const model = prefixCacheOf(result.files.results).model;
        assert.equal(model.block_size, pageSize ?? 1);
        assert.equal(model.semantics?.engine, 'sglang');
        assert.match(model.semantics!.sources.join(' '), pageSize === undefined ? /default page_size/ : /GET \/server_info page_size/);
      } finally {
        await server.close();
      }
    }
  });

  test('--cache-block-size overrides the server, and results say both', { timeout: 30_000 }, async () => {
    const server = await startSglangServer({ pageSize: 64 });
    const dir = tempDir('sglang-override');
    try {
      const result = await runBenchmark({ url: server.url, inputFile: writeSyntheticDataset(dir, 1, 2), outputDir: join(dir, 'out'), cacheBlockSize: 16 });
      const model = prefixCacheOf(result.files.results).model;
      assert.equal(model.block_size, 16);
      assert.ok(model.semantics!.sources.includes('block_size: --cache-block-size (the server\'s: 64)'), model.semantics!.sources.join('; '));
    } finally {
      await server.close();
    }
  });

  test('pure reading: llama.cpp is token granular and shared at a request\'s end; vLLM and unknown servers default to 16 and share from the step a block is scheduled in; SGLang after it', () => {
    const props = { status: 200, headers: {}, text: JSON.stringify({ total_slots: 6, default_generation_settings: { n_ctx: 4096 } }) };
    assert.deepEqual(
      { ...cacheSemantics('llamacpp', { props }), sources: [] },
      { engine: 'llamacpp', block_size: 1, shared_from: 'end', slots: 6, sources: [] },
    );
    assert.equal(cacheSemantics('vllm', {}).block_size, 16);
    assert.equal(cacheSemantics('vllm', { metricsBlockSize: { blockSize: 32, source: 'vllm:cache_config_info' } }).block_size, 32);
    assert.equal(cacheSemantics('vllm', {}).shared_from, 'schedule');
    assert.equal(cacheSemantics('unknown', {}).shared_from, 'schedule');
    assert.equal(cacheSemantics('sglang', {}).shared_from, 'prefill');
    // The simulator states which it runs.
    const simulating = (semantics: string): string => cacheSemantics('chatload-sim', { metricsText: `chatload_sim_cache_semantics_info{semantics="${semantics}"} 1\n` }).shared_from;
    assert.deepEqual(['vllm', 'sglang', 'llamacpp'].map(simulating), ['schedule', 'prefill', 'end']);
    // NVIDIA Dynamo's frontend states its workers' block size (not their engine: vLLM's rule, said in the sources).
    const dynamo = cacheSemantics('dynamo', { metricsText: '# TYPE dynamo_frontend_model_kv_cache_block_size gauge\ndynamo_frontend_model_kv_cache_block_size{model="m"} 64\n' });
    assert.deepEqual([dynamo.block_size, dynamo.shared_from], [64, 'schedule']);
    assert.ok(dynamo.sources.includes('block_size: dynamo_frontend_model_kv_cache_block_size'), dynamo.sources.join('; '));
    assert.match(dynamo.sources.join('; '), /does not say which engine/);
    assert.equal(cacheSemantics('dynamo', { metricsText: 'dynamo_frontend_model_kv_cache_block_size{model="m"} 0\n' }).block_size, 16);
    // Only Dynamo's own page is read for it.
    assert.equal(cacheSemantics('vllm', { metricsText: 'dynamo_frontend_model_kv_cache_block_size 64\n' }).block_size, 16);
  });
});

describe("the server's token ids (issue #30)", () => {
  test('vLLM that returns no ids with its answers: with no local tokenizer for -m, the expected cache counts in the ids POST /tokenize gives for each prompt', { timeout: 30_000 }, async () => {
    // The test server renders the messages with chatload's own ChatML template and encodes them: ids a run could not
    // tell from its own, except by asking.
    const tokenize = (body: Record<string, unknown>): number[] =>
      Array.isArray(body.messages) ? [...encodePrompt(defaultTokenCounter, body.messages as ChatMessage[])] : defaultTokenCounter.tokenizer.encode(String(body.prompt)).map((id) => id + 1);
    const server = await startVllmServer({ model: 'org/unknown-model', tokenize });
    const dir = tempDir('vllm-tokenize');
    try {
      const result = await runBenchmark({ url: server.url, model: 'org/unknown-model', inputFile: writeSyntheticDataset(dir, 2, 2), outputDir: join(dir, 'out'), earlyStop: false });
      const doc = JSON.parse(readFileSync(result.files.results, 'utf8')) as { tokenizer: string; token_counts_exact: boolean };
      assert.equal(doc.tokenizer, 'server (vLLM return_token_ids, else /tokenize)');
      assert.equal(doc.token_counts_exact, true);
      assert.equal(prefixCacheOf(result.files.results).model.token_ids, 'server');
      const calls = server.requests.filter((r) => r.method === 'POST' && r.url === '/tokenize');
      const chats = server.requests.filter((r) => r.url === '/v1/chat/completions');
      // One call for the check, one per request's prompt, one per answer.
      assert.equal(calls.length, 1 + 2 * chats.length);
      for (const r of readRequestsJsonl(result.files.requests)) assert.ok(r.cache_model_input_tokens! > 0);
      const approxWarning = result.warnings.find((w) => w.startsWith('token counts are approximate'));
      assert.match(approxWarning ?? '', /the expected cache counts in the server's own token ids \(server \(vLLM return_token_ids, else \/tokenize\)\)/);
    } finally {
      await server.close();
    }
  });

  test('vLLM return_token_ids: the ids come with each answer (no request more), the generated ones exactly as cached: nothing missed', { timeout: 30_000 }, async () => {
    const server = await startVllmTokenIdsServer();
    const dir = tempDir('vllm-token-ids');
    try {
      const result = await runBenchmark({ url: server.url, model: 'org/tiny', inputFile: writeSyntheticDataset(dir, 2, 3), numClients: 2, outputDir: join(dir, 'out'), earlyStop: false });
      const doc = JSON.parse(readFileSync(result.files.results, 'utf8')) as { tokenizer: string; token_counts_exact: boolean };
      assert.equal(doc.tokenizer, 'server (vLLM return_token_ids, else /tokenize)');
      assert.equal(doc.token_counts_exact, true);
      const records = readRequestsJsonl(result.files.requests);
      assert.equal(records.length, 6);
      assert.equal(server.calls.get('POST /tokenize'), 1, 'the check alone: every prompt and answer came with its ids');
      for (const r of records) {
        assert.equal(r.cache_model_input_tokens, r.input_num_tokens);
        assert.equal(r.expected_cached_tokens, r.cached_tokens, `${r.conversation_id} turn ${r.turn}`);
      }
      const t = result.prefixCache.totals;
      assert.ok(t.cached_tokens > 0, 'later turns hit their history, the answers\' generated ids included');
      assert.equal(t.efficiency, 1);
      assert.equal(t.misses.tokens, 0);
    } finally {
      await server.close();
    }
  });

  test('an older vLLM that ignores return_token_ids: each prompt and answer is asked of /tokenize, and the answers\' ids that differ from their text are history_resent misses', { timeout: 30_000 }, async () => {
    const server = await startVllmTokenIdsServer({ ignoreTokenIds: true });
    const dir = tempDir('vllm-token-ids-ignored');
    try {
      const result = await runBenchmark({ url: server.url, model: 'org/tiny', inputFile: writeSyntheticDataset(dir, 2, 3), numClients: 2, outputDir: join(dir, 'out'), earlyStop: false });
      assert.equal(server.calls.get('POST /tokenize'), 1 + 6 + 6, 'the check, then each prompt and each answer');
      const t = result.prefixCache.totals;
      assert.ok(t.misses.tokens > 0);
      assert.equal(t.misses.causes.history_resent, t.misses.tokens, JSON.stringify(t.misses));
      for (const r of readRequestsJsonl(result.files.requests)) assert.ok(r.expected_cached_tokens >= r.cached_tokens!);
    } finally {
      await server.close();
    }
  });

  test('SGLang: the prompts\' ids from POST /v1/tokenize (messages), the answers\' from it too (prompt)', { timeout: 30_000 }, async () => {
    const tokenize = (body: Record<string, unknown>): number[] =>
      Array.isArray(body.messages) ? [...encodePrompt(defaultTokenCounter, body.messages as ChatMessage[])] : defaultTokenCounter.tokenizer.encode(String(body.prompt));
    const server = await startSglangServer({ model: 'org/unknown-model', tokenize });
    const dir = tempDir('sglang-tokenize');
    try {
      const result = await runBenchmark({ url: server.url, model: 'org/unknown-model', inputFile: writeSyntheticDataset(dir, 2, 2), outputDir: join(dir, 'out'), earlyStop: false });
      const doc = JSON.parse(readFileSync(result.files.results, 'utf8')) as { tokenizer: string; token_counts_exact: boolean };
      assert.equal(doc.tokenizer, 'server (SGLang /v1/tokenize)');
      assert.equal(doc.token_counts_exact, true);
      const calls = server.requests.filter((r) => r.method === 'POST' && r.url === '/v1/tokenize');
      assert.equal(calls.length, 1 + 2 * 4, 'the check, then each prompt and each answer');
      assert.ok(calls.some((c) => (JSON.parse(c.body) as { messages?: unknown }).messages !== undefined));
      for (const r of readRequestsJsonl(result.files.requests)) assert.ok(r.cache_model_input_tokens! > 0);
    } finally {
      await server.close();
    }
  });

  test('--tokenizer server against a server without tokenize endpoints: one line, before anything is sent', { timeout: 30_000 }, async () => {
    const sim = await startSimulator();
    const dir = tempDir('tokenizer-server-sim');
    try {
      await assert.rejects(
        runBenchmark({ url: sim.url, tokenizer: 'server', inputFile: writeSyntheticDataset(dir, 1, 1), outputDir: join(dir, 'out') }),
        (error: Error) => error instanceof ConfigError && /^--tokenizer server: the server's engine \(chatload-sim\) has no tokenize endpoint/.test(error.message) && !error.message.includes('\n'),
      );
    } finally {
      await sim.close();
    }
  });

  test('approximate counts against a server that counts its own way: efficiency is "not comparable", with the measured disagreement', { timeout: 30_000 }, async () => {
    // The vLLM test server reports 100 prompt tokens for every prompt; the approximate tokenizer counts otherwise.
    const server = await startVllmServer({ model: 'org/unknown-model' });
    const dir = tempDir('not-comparable');
    try {
      const result = await runBenchmark({ url: server.url, model: 'org/unknown-model', tokenizer: 'approx', inputFile: writeSyntheticDataset(dir, 2, 3), outputDir: join(dir, 'out'), earlyStop: false });
      const p = prefixCacheOf(result.files.results);
      assert.equal(p.comparable, false);
      assert.equal(p.totals.efficiency, null);
      assert.equal(p.totals.expected_hit_ratio, null);
      assert.ok(p.per_turn.every((t) => t.efficiency === null));
      const d = p.totals.token_count_disagreement!;
      assert.ok(d > 0.005, `the counts differ: ${d}`);
      assert.match(p.not_comparable as string, new RegExp(`differ from the server's by ${(d * 100).toFixed(1)}%`));
      assert.equal(result.summary.cache_efficiency, null);
      const text = formatSummary({ summary: result.summary, perTurn: result.perTurn, clientHealth: null, prefixCache: result.prefixCache }, { color: false });
      assert.match(text, /efficiency not comparable \(approximate token counts/);
      assert.doesNotMatch(text, /efficiency \d+(\.\d+)?%/, 'never a bare percentage');
    } finally {
      await server.close();
    }
  });
});
