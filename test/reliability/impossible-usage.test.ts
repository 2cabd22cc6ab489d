// A server's `usage` is not trusted as sent (issue #35, item 6): negative completion tokens, cached tokens above the
// prompt's, and a prompt of 1e20 tokens are dropped, counted by field in results.json `invalid_usage`, warned about
// once a field; the summary's throughput and hit ratio stay possible.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { chunkJson, MODELS_RESPONSE, sseEvent, startScriptedServer, usageChunkJson } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

test('impossible usage values are dropped, counted and warned about once each', { timeout: 60_000 }, async () => {
  let chats = 0;
  // In turn: negative completion tokens, cached above the prompt, a prompt of 1e20; then a usage that is right.
  const usages = [usageChunkJson(50, -1453), usageChunkJson(50, 2, 5000), usageChunkJson(1e20, 2), usageChunkJson(50, 2, 20)];
  const server = await startScriptedServer((request) => {
    if (request.method === 'GET') return MODELS_RESPONSE;
    const usage = usages[chats++ % usages.length]!;
    return { actions: [{ write: sseEvent(chunkJson({ content: 'Hello' })) + sseEvent(chunkJson({ content: ' there' }, 'stop')) + sseEvent(usage) + sseEvent('[DONE]') }, { end: true }] };
  });
  const dir = tempDir('impossible-usage');
  try {
    const result = await runBenchmark({ url: server.url, inputFile: writeSyntheticDataset(dir, 2, 4), numClients: 1, outputDir: join(dir, 'out'), earlyStop: false });
    const records = readRequestsJsonl(result.files.requests);
    assert.equal(records.length, 8);
    const doc = JSON.parse(readFileSync(result.files.results, 'utf8')) as { invalid_usage: Record<string, number> };
    assert.deepEqual(doc.invalid_usage, { completion_tokens: 2, cached_tokens: 2, prompt_tokens: 2 });
    for (const field of ['completion_tokens', 'cached_tokens', 'prompt_tokens']) {
      assert.equal(result.warnings.filter((w) => w.includes(`impossible ${field}`)).length, 1, `one warning for ${field}`);
    }
    const s = result.summary;
    assert.ok(s.output_throughput >= 0 && s.total_token_throughput < 1e9, `throughputs: ${s.output_throughput}, ${s.total_token_throughput}`);
    assert.ok(s.cache_hit_ratio !== null && s.cache_hit_ratio <= 1, `hit ratio ${s.cache_hit_ratio}`);
    // A dropped prompt or completion count falls back to the local counts; a dropped cached count is unknown.
    const withoutUsage = records.filter((r) => r.invalid_usage?.includes('completion_tokens') || r.invalid_usage?.includes('prompt_tokens'));
    assert.ok(withoutUsage.every((r) => r.input_tokens_source === 'local' && r.output_num_tokens > 0));
    assert.ok(records.filter((r) => r.invalid_usage?.includes('cached_tokens')).every((r) => r.cached_tokens === null && r.input_tokens_source === 'server'));
  } finally {
    await server.close();
  }
});
