// A tool-calling history sent to the Responses API (merge of issues #14 and #15): the client sends an assistant's
// tool calls as `function_call` items and the results as `function_call_output` items, and the simulator reads them
// back as the same chat history, so it counts the same prompt as the chat endpoint does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildResponsesBody } from '../../src/client/endpoints/responses-body.js';
import { buildChatBody } from '../../src/client/request-body.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import type { ChatMessage } from '../../src/tokenizer/types.js';
import { raw } from './sim-http.js';

const history: ChatMessage[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: [{ type: 'text', text: 'fix the bug in a.ts' }] },
  {
    role: 'assistant',
    content: 'Reading both files.',
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
      { id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.ts"}' } },
    ],
  },
  { role: 'tool', content: 'export const a = 1;', tool_call_id: 'c1' },
  { role: 'tool', content: 'export const b = 2;', tool_call_id: 'c2' },
];

describe('tool-calling history over the Responses API', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ modelName: 'm', profile: 'cpu-tiny', config: { tool_call_rate: 0 } });
  });
  after(async () => {
    await sim.close();
  });

  test('tool calls go as function_call items after the text, results as function_call_output items', () => {
    const body = buildResponsesBody({ model: 'm', messages: history, stream: false });
    assert.deepEqual(body.input, [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: [{ type: 'input_text', text: 'fix the bug in a.ts' }] },
      { role: 'assistant', content: 'Reading both files.' },
      { type: 'function_call', call_id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' },
      { type: 'function_call', call_id: 'c2', name: 'read_file', arguments: '{"path":"b.ts"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'export const a = 1;' },
      { type: 'function_call_output', call_id: 'c2', output: 'export const b = 2;' },
    ]);
  });

  test('the simulator reads them back: the same prompt tokens as the chat request', { timeout: 20_000 }, async () => {
    const responses = await raw(sim.url, '/v1/responses', { ...buildResponsesBody({ model: 'm', messages: history, stream: false, maxTokens: 4 }) });
    assert.equal(responses.status, 200, responses.body);
    const chat = await raw(sim.url, '/v1/chat/completions', buildChatBody({ model: 'm', messages: history, stream: false, maxTokens: 4 }));
    assert.equal(chat.status, 200, chat.body);
    const inputTokens = (JSON.parse(responses.body) as { usage: { input_tokens: number } }).usage.input_tokens;
    const promptTokens = (JSON.parse(chat.body) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
    assert.ok(promptTokens > 20);
    assert.equal(inputTokens, promptTokens);
  });
});
