// empty_answer (issue #16): a 2xx reply that ended normally but carried no choice with any content, reasoning or
// tool call is a failure of its own kind, not a completed request with 0 tokens. A choice cut at its length limit
// (finish_reason "length", as with max_tokens 0) is an answer.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chatRequest, withScriptedClient } from '../helpers/client-test-utils.js';
import { chunkJson, sseEvent, usageChunkJson, type ScriptedResponse } from '../helpers/scripted-server.js';

const TEST_TIMEOUT = { timeout: 15_000 };

function stream(...events: unknown[]): ScriptedResponse {
  return { actions: [{ write: events.map((e) => sseEvent(e)).join('') + sseEvent('[DONE]') }, { end: true }] };
}

function json(body: unknown): ScriptedResponse {
  return { headers: { 'content-type': 'application/json' }, actions: [{ write: JSON.stringify(body) }, { end: true }] };
}

const EMPTY_CHOICES = { id: 'x', object: 'chat.completion.chunk', choices: [] };

describe('empty_answer', () => {
  test('only `choices: []` chunks, then [DONE]: empty_answer, with what usage said', TEST_TIMEOUT, async () => {
    await withScriptedClient(stream(EMPTY_CHOICES, EMPTY_CHOICES, usageChunkJson(5, 0)), {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'empty_answer');
      assert.match(result.error!.message, /no choice carried content, reasoning or a tool call \(usage says 0 completion tokens\)/);
      assert.equal(result.content, '');
    });
  });

  test('a choice with only a role and an empty content, finished with "stop": empty_answer', TEST_TIMEOUT, async () => {
    await withScriptedClient(stream(chunkJson({ role: 'assistant', content: '' }), chunkJson({}, 'stop')), {}, async (client) => {
      assert.equal((await client.send(chatRequest())).error?.kind, 'empty_answer');
    });
  });

  test('not empty: content, reasoning alone, a tool call alone, or a choice cut at its length limit (max_tokens 0)', TEST_TIMEOUT, async () => {
    const answers: ScriptedResponse[] = [
      stream(chunkJson({ content: 'x' })),
      stream(chunkJson({ reasoning_content: 'thinking' })),
      stream(chunkJson({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls')),
      stream(chunkJson({ role: 'assistant', content: '' }, 'length'), usageChunkJson(5, 0)),
      json({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] }),
    ];
    await withScriptedClient((_request, index) => answers[index]!, {}, async (client) => {
      for (let i = 0; i < answers.length; i++) {
        const result = await client.send(chatRequest({ stream: i < 4 }));
        assert.equal(result.error, undefined, `answer ${i}: ${result.error?.message}`);
      }
    });
  });

  test('a JSON body with `choices: []`, or a choice without content: empty_answer; no choices list at all: malformed_stream', TEST_TIMEOUT, async () => {
    const answers = [
      json({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 0 } }),
      json({ choices: [{ message: { role: 'assistant', content: '' }, finish_reason: 'stop' }] }),
      json({ object: 'chat.completion' }),
    ];
    await withScriptedClient((_request, index) => answers[index]!, {}, async (client) => {
      const kinds = [];
      for (let i = 0; i < answers.length; i++) kinds.push((await client.send(chatRequest({ stream: false }))).error?.kind);
      assert.deepEqual(kinds, ['empty_answer', 'empty_answer', 'malformed_stream']);
    });
  });

  test('a stream that ends without [DONE] stays truncated_stream, content or not', TEST_TIMEOUT, async () => {
    await withScriptedClient({ actions: [{ write: sseEvent(EMPTY_CHOICES) }, { end: true }] }, {}, async (client) => {
      assert.equal((await client.send(chatRequest())).error?.kind, 'truncated_stream');
    });
  });
});
