// Tool definitions are prompt tokens (tokenizer/tools-prompt.ts): vLLM and SGLang render a chat request's `tools` into
// the prompt through the model's template (Qwen's puts them in the system turn), count them in usage.prompt_tokens
// and cache them as the front of every step's prefix. The simulator renders them as chatload's ChatML stand-in does,
// so chatload's local counts and its expected-cache model agree with the server's own counters.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { localPromptTokens } from '../../src/load/message-tokens.js';
import { startSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { chatmlTemplate, countPromptTokens, defaultTokenCounter, withToolsTurn, type ChatMessage } from '../../src/tokenizer/index.js';
import { writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

/** `n` function definitions with descriptions of ~`words` words each. */
function toolDefinitions(n: number, words: number): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({
    type: 'function',
    function: {
      name: `tool_${i}`,
      description: Array.from({ length: words }, (_, w) => `d${(i * 31 + w) % 89}q`).join(' '),
      parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
    },
  }));
}

describe('tool definitions in the prompt', () => {
  test('ChatML renders them as one system turn before the messages, the same object turn after turn', () => {
    const tools = toolDefinitions(2, 5);
    const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
    const rendered = chatmlTemplate.apply(messages, { addGenerationPrompt: true, tools });
    assert.match(rendered, /^<\|im_start\|>system\n# Tools\n[\s\S]*<tools>\n\{"type":"function","function":\{"name":"tool_0"[\s\S]*<\/tools>[\s\S]*<\|im_end\|>\n<\|im_start\|>user\nhi<\|im_end\|>\n<\|im_start\|>assistant\n$/);
    assert.equal(chatmlTemplate.apply(messages, { addGenerationPrompt: true, tools: [] }), chatmlTemplate.apply(messages, { addGenerationPrompt: true }));
    // Kept per tools list: the prompt's first message is the very object of the turn before (prompt ids reuse it).
    assert.equal(withToolsTurn(messages, tools)[0], withToolsTurn([...messages, { role: 'assistant', content: 'yes' }], tools)[0]);
    assert.equal(withToolsTurn(messages, undefined), messages);
    // The local count, exact under the threshold and summed per message past it, includes them.
    const withTools = localPromptTokens(defaultTokenCounter, messages, tools);
    assert.equal(withTools, countPromptTokens(defaultTokenCounter, messages, tools));
    assert.ok(withTools > countPromptTokens(defaultTokenCounter, messages) + 20);
  });

  test('against the simulator: prompt tokens, cached tokens and the expected cache all count the definitions', { timeout: 60_000 }, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny' });
    const dir = tempDir('tools-prompt');
    try {
      // ~1,500 tokens of definitions shared by two conversations with different questions.
      const tools = toolDefinitions(6, 120);
      const conversation = (id: string) => ({
        id,
        tools,
        messages: [
          { role: 'user', content: `${id}: what is in the repository?` },
          { role: 'assistant', content: 'Let me look.' },
          { role: 'user', content: `${id}: and the tests?` },
          { role: 'assistant', content: 'They pass.' },
        ],
      });
      const result = await runBenchmark({ url: sim.url, inputFile: writeDataset(dir, [conversation('a'), conversation('b')]), outputDir: dir, numClients: 1, limitMinTokens: 8, limitMaxTokens: 8 });
      assert.equal(result.summary.failed, 0);
      const records = readRequestsJsonl(result.files.requests);
      assert.equal(records.length, 4);
      const first = records.find((r) => r.conversation_id === 'a' && r.turn === 1)!;
      // The server's prompt count is chatload's count of the same request with its tools.
      const firstMessages: ChatMessage[] = [{ role: 'user', content: 'a: what is in the repository?' }];
      assert.equal(first.input_num_tokens, countPromptTokens(defaultTokenCounter, firstMessages, tools));
      const toolsTurn = countPromptTokens(defaultTokenCounter, [], tools);
      assert.ok(toolsTurn > 1000, `the definitions are ~1,500 tokens, got ${toolsTurn}`);
      // One client, one request at a time: the model's expected hits are the server's cached tokens, exactly, and
      // b's first step finds a's definitions (the full blocks of the shared tools turn, at least).
      for (const r of records) assert.equal(r.expected_cached_tokens, r.cached_tokens, `${r.conversation_id} turn ${r.turn}`);
      const bFirst = records.find((r) => r.conversation_id === 'b' && r.turn === 1)!;
      assert.ok(bFirst.cached_tokens! >= Math.floor(toolsTurn / 16) * 16, `b's first step reuses the definitions: ${bFirst.cached_tokens} of ${toolsTurn}`);
    } finally {
      await sim.close();
    }
  });
});
