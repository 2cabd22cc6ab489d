// The simulator speaks tools (issue #14): with `tools` in a chat request it answers a share of requests
// (`tool_call_rate`) with a tool call in OpenAI's streamed delta format, and it accepts tool-calling histories.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatClient } from '../../src/client/chat-client.js';
import { startSimulator } from '../../src/sim/index.js';
import type { ChatMessage } from '../../src/tokenizer/types.js';
import { raw } from './sim-http.js';

const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
const history: ChatMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'fix it' }] },
  { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }] },
  { role: 'tool', content: 'file a', tool_call_id: 'c1' },
];

describe('simulator tool calls', () => {
  test('tool_call_rate 1: every answer is a streamed tool call whose fragments join into JSON arguments', { timeout: 20_000 }, async () => {
    const sim = await startSimulator({ modelName: 'm', profile: 'cpu-tiny', config: { tool_call_rate: 1 } });
    const client = new ChatClient({ baseUrl: sim.url, connections: 2, requestTimeoutMs: 10_000 });
    try {
      for (const stream of [true, false]) {
        const result = await client.send({ model: 'm', messages: history, tools, stream, maxTokens: 12, ignoreEos: true });
        assert.equal(result.error, undefined, result.error?.message);
        assert.equal(result.finishReason, 'tool_calls');
        assert.equal(result.toolCalls?.length, 1);
        assert.equal(result.toolCalls![0]!.function.name, 'read_file');
        const args = JSON.parse(result.toolCalls![0]!.function.arguments) as { input: string };
        assert.ok(args.input.length > 0);
        assert.equal(result.usage?.completionTokens, 12);
        // One arguments fragment per token, after the delta that names the call.
        if (stream) assert.equal(result.numTokenChunks, 13);
      }
      // Raw bytes: the first delta names the call with empty arguments (OpenAI's format).
      const response = await raw(sim.url, '/v1/chat/completions', { model: 'm', messages: history, tools, stream: true, max_tokens: 3 });
      assert.match(response.body, /"tool_calls":\[\{"index":0,"id":"call_[^"]+","type":"function","function":\{"name":"read_file","arguments":""\}\}\]/);
    } finally {
      await client.close();
      await sim.close();
    }
  });

  test('without tools, or with tool_choice "none", or at rate 0, answers are text', { timeout: 20_000 }, async () => {
    const sim = await startSimulator({ modelName: 'm', profile: 'cpu-tiny', config: { tool_call_rate: 1 } });
    const zero = await startSimulator({ modelName: 'm', profile: 'cpu-tiny', config: { tool_call_rate: 0 } });
    const client = new ChatClient({ baseUrl: sim.url, connections: 2, requestTimeoutMs: 10_000 });
    const zeroClient = new ChatClient({ baseUrl: zero.url, connections: 2, requestTimeoutMs: 10_000 });
    try {
      const plain = await client.send({ model: 'm', messages: history, stream: true, maxTokens: 4 });
      assert.equal(plain.toolCalls, undefined);
      assert.ok(plain.content.length > 0);
      const none = await client.send({ model: 'm', messages: history, tools, stream: true, maxTokens: 4, extraBody: { tool_choice: 'none' } });
      assert.equal(none.toolCalls, undefined);
      const rateZero = await zeroClient.send({ model: 'm', messages: history, tools, stream: true, maxTokens: 4 });
      assert.equal(rateZero.toolCalls, undefined);
    } finally {
      await client.close();
      await zeroClient.close();
      await sim.close();
      await zero.close();
    }
  });
});
