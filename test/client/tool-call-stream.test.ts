// Streamed tool calls in OpenAI's chat completions format (as OpenAI, vLLM and SGLang send them): the first delta of a
// call carries `index`, `id`, `type` and `function.name` with empty arguments; `function.arguments` then arrives in
// fragments across chunks, cut anywhere (even inside a JSON string); parallel calls interleave by `index`; the last
// chunk has `finish_reason: "tool_calls"`. The scripted server writes each chunk separately, some split mid-event.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chatRequest, withScriptedClient } from '../helpers/client-test-utils.js';
import { chunkJson, sseEvent, usageChunkJson, type ScriptAction } from '../helpers/scripted-server.js';

const TEST_TIMEOUT = { timeout: 15_000 };

const argsA = '{"path": "src/main.ts", "start_line": 10}';
const argsB = '{"pattern": "TODO \\u00e9"}';

/** The chunks of a two-call answer, arguments cut into fragments of 1-7 characters, calls interleaved. */
function toolCallEvents(): string[] {
  const events = [
    sseEvent(chunkJson({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'read_file', arguments: '' } }] })),
  ];
  const cut = (text: string): string[] => {
    const out: string[] = [];
    for (let i = 0, size = 1; i < text.length; i += size, size = (size % 7) + 1) out.push(text.slice(i, i + size));
    return out;
  };
  const a = cut(argsA);
  const b = cut(argsB);
  events.push(...a.slice(0, 3).map((f) => sseEvent(chunkJson({ tool_calls: [{ index: 0, function: { arguments: f } }] }))));
  events.push(sseEvent(chunkJson({ tool_calls: [{ index: 1, id: 'call_B', type: 'function', function: { name: 'grep', arguments: '' } }] })));
  const rest = Math.max(a.length - 3, b.length);
  for (let i = 0; i < rest; i++) {
    if (i + 3 < a.length) events.push(sseEvent(chunkJson({ tool_calls: [{ index: 0, function: { arguments: a[i + 3] } }] })));
    if (i < b.length) events.push(sseEvent(chunkJson({ tool_calls: [{ index: 1, function: { arguments: b[i] } }] })));
  }
  events.push(sseEvent(chunkJson({}, 'tool_calls')), sseEvent(usageChunkJson(40, 25)), sseEvent('[DONE]'));
  return events;
}

describe('streamed tool calls', () => {
  test('fragmented arguments of parallel calls are assembled by index; the first tool-call delta is timed', TEST_TIMEOUT, async () => {
    const events = toolCallEvents();
    // Each event its own write, 2 ms apart; one event split inside its JSON so a read ends mid-fragment.
    const actions: ScriptAction[] = [];
    events.forEach((event, i) => {
      if (i === 5) {
        actions.push({ write: event.slice(0, 30), delayMs: 2 }, { write: event.slice(30), delayMs: 2 });
      } else {
        actions.push({ write: event, delayMs: i === 0 ? 20 : 2 });
      }
    });
    actions.push({ end: true });
    await withScriptedClient({ actions }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined, result.error?.message);
      assert.deepEqual(result.toolCalls, [
        { id: 'call_A', type: 'function', function: { name: 'read_file', arguments: argsA } },
        { id: 'call_B', type: 'function', function: { name: 'grep', arguments: argsB } },
      ]);
      assert.deepEqual(JSON.parse(result.toolCalls![1]!.function.arguments), { pattern: 'TODO é' });
      assert.equal(result.content, '');
      assert.equal(result.finishReason, 'tool_calls');
      assert.ok(result.firstToolCallAtMs !== undefined && result.firstToolCallAtMs >= result.sentAtMs);
      // A tool call is generated output: it is the first token, and every delta chunk is a token chunk.
      assert.equal(result.firstTokenAtMs, result.firstToolCallAtMs);
      assert.equal(result.numTokenChunks, events.length - 3);
    });
  });

  test('text before the calls: TTFT is the text, the tool-call time is the first call delta', TEST_TIMEOUT, async () => {
    const actions: ScriptAction[] = [
      { write: sseEvent(chunkJson({ role: 'assistant', content: 'Let me look.' })), delayMs: 5 },
      { write: sseEvent(chunkJson({ tool_calls: [{ index: 0, id: 'c9', type: 'function', function: { name: 'ls', arguments: '{}' } }] })), delayMs: 30 },
      { write: sseEvent(chunkJson({}, 'tool_calls')) + sseEvent('[DONE]'), delayMs: 2 },
      { end: true },
    ];
    await withScriptedClient({ actions }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.content, 'Let me look.');
      assert.equal(result.toolCalls?.[0]?.function.name, 'ls');
      assert.ok(result.firstToolCallAtMs! > result.firstTokenAtMs!, 'the call came after the text');
    });
  });

  test('a non-streamed message.tool_calls is read whole; no tool calls leaves toolCalls unset', TEST_TIMEOUT, async () => {
    const bodies = [
      { choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'x1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: 'tool_calls' }] },
      { choices: [{ message: { role: 'assistant', content: 'plain' }, finish_reason: 'stop' }] },
    ];
    await withScriptedClient((_r, i) => ({ headers: { 'content-type': 'application/json' }, actions: [{ write: JSON.stringify(bodies[i]) }, { end: true }] }), {}, async (client) => {
      const first = await client.send(chatRequest({ stream: false }));
      assert.deepEqual(first.toolCalls, [{ id: 'x1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }]);
      const second = await client.send(chatRequest({ stream: false }));
      assert.equal(second.toolCalls, undefined);
      assert.equal(second.firstToolCallAtMs, undefined);
    });
  });

  test('the request carries the tools and messages in their wire shape (null content beside tool calls, tool_call_id)', TEST_TIMEOUT, async () => {
    const tools = [{ type: 'function', function: { name: 'ls', parameters: { type: 'object' } } }];
    const messages = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'a' }, { type: 'text' as const, text: 'b' }] },
      { role: 'assistant' as const, content: '', tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'ls', arguments: '{}' } }] },
      { role: 'tool' as const, content: 'x.ts', tool_call_id: 'c1' },
    ];
    const script = { actions: [{ write: sseEvent(chunkJson({ content: 'ok' })) + sseEvent('[DONE]') }, { end: true as const }] };
    await withScriptedClient(script, {}, async (client, server) => {
      for (let i = 0; i < 2; i++) await client.send(chatRequest({ messages, tools }));
      const bodies = server.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      assert.deepEqual(bodies[0]!.tools, tools);
      assert.deepEqual(bodies[0]!.messages, [
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
        { role: 'assistant', content: null, tool_calls: messages[1]!.tool_calls },
        { role: 'tool', content: 'x.ts', tool_call_id: 'c1' },
      ]);
      assert.equal(server.requests[1]!.body, server.requests[0]!.body, 'the cached encoding gives the same body');
    });
  });
});
