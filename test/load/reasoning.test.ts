// Reasoning models (issue 12): reasoning tokens are recorded, and the expected cache does not count the reasoning
// that is not sent back in the history.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { startReasoningServer } from '../helpers/reasoning-server.js';
import { tempDir } from '../helpers/tmp.js';
import { formatSummary } from '../../src/report/terminal.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('reasoning models', () => {
  for (const field of ['reasoning_content', 'reasoning'] as const) {
    test(`delta.${field}: reasoning_tokens recorded, ttft_content after the reasoning, expected cache without it`, { timeout: 30_000 }, async () => {
      const server = await startReasoningServer({ reasoningWords: 30, answerWords: 6, field });
      const dir = tempDir('reasoning');
      try {
        const result = await runBenchmark({ url: server.url, inputFile: writeSyntheticDataset(dir, 1, 2), outputDir: dir });
        assert.equal(result.summary.failed, 0);
        const [first, second] = readRequestsJsonl(result.files.requests);
        assert.equal(first!.reasoning_tokens, 30);
        assert.equal(first!.output_num_tokens, 36);
        assert.ok(first!.ttft_content_ms! >= first!.ttft_ms!, 'the answer starts after the reasoning');
        assert.ok(first!.ttft_reasoning_ms !== null);
        // Turn 2 can reuse turn 1's prompt and the 6 answer tokens sent back, not the 30 reasoning tokens.
        assert.equal(second!.expected_cached_tokens_own_history, 50 + 6);
        // The answer went back into the history without the reasoning.
        const body = JSON.parse(server.requests.filter((r) => r.method === 'POST')[1]!.body) as { messages: { role: string; content: string }[] };
        assert.equal(body.messages.at(-2)?.content, 'yes yes yes yes yes yes');
        // The time to the answer is summarized beside TTFT: results, per turn, terminal and report.
        const content = result.summary.metrics.ttft_content_ms!;
        assert.equal(content.count, 2);
        assert.ok(content.mean >= result.summary.metrics.ttft_ms!.mean);
        assert.equal(result.perTurn[0]!.ttft_content_ms?.count, 1);
        const text = formatSummary({ summary: result.summary, perTurn: result.perTurn, clientHealth: null, conversations: {} }, { color: false });
        assert.match(text, /│ ttft_content_ms +│ +2 │/);
        assert.match(text, /answer p50/);
        assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /time to answer p50 \/ p99/);
      } finally {
        await server.close();
      }
    });
  }
});

describe('--keep-reasoning', () => {
  test('sends the reasoning back as reasoning_content, and the expected cache counts all of the completion', { timeout: 30_000 }, async () => {
    const server = await startReasoningServer({ reasoningWords: 30, answerWords: 6, field: 'reasoning' });
    const dir = tempDir('keep-reasoning');
    try {
      const result = await runBenchmark({ url: server.url, inputFile: writeSyntheticDataset(dir, 1, 2), outputDir: dir, keepReasoning: true });
      assert.equal(result.summary.failed, 0);
      const [, second] = readRequestsJsonl(result.files.requests);
      assert.equal(second!.expected_cached_tokens_own_history, 50 + 36);
      const body = JSON.parse(server.requests.filter((r) => r.method === 'POST')[1]!.body) as { messages: { role: string; content: string; reasoning_content?: string }[] };
      const answer = body.messages.at(-2)!;
      assert.equal(answer.content, 'yes yes yes yes yes yes');
      assert.equal(answer.reasoning_content, `hmm${' hmm'.repeat(29)}`);
    } finally {
      await server.close();
    }
  });
});
