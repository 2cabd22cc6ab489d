// Chunks read by their shape (client/chunk-shape.ts, issue 17 part 4) are a fast path of ResponseCollector: for
// every stream it must give exactly what JSON.parse of every chunk gives. Each test feeds the same events to a
// collector that uses shapes and to one that only parses (`scanChunks: false`) and compares all they recorded.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ChunkShape } from '../../src/client/chunk-shape.js';
import { ResponseCollector } from '../../src/client/response-collector.js';

/** What a collector made of `events` (each arriving at its index), `[DONE]` included when given. */
function collect(events: readonly string[], scanChunks: boolean): unknown {
  const collector = new ResponseCollector(0, ['sk-secret'], undefined, { scanChunks });
  events.forEach((data, i) => collector.onSseEvent(data, i + 1));
  // The texts are getters on the result's prototype, which deepEqual does not compare: read them out.
  const { result } = collector;
  return { result: { ...result, content: result.content, reasoning: result.reasoning }, finished: collector.finished, sawDone: collector.sawDone };
}

function assertSameAsParse(events: readonly string[]): void {
  assert.deepEqual(collect(events, true), collect(events, false), `events: ${JSON.stringify(events)}`);
}

/** A chunk as vLLM and SGLang stream them (OpenAI's shape), with the delta given. */
function chunk(delta: unknown, finishReason: string | null = null, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_796_081_227, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...extra });
}

describe('chunk shapes', () => {
  test('a shape reads the chunks around another plain content, and nothing else', () => {
    const shape = ChunkShape.learn(chunk({ content: 'cod' }), 'cod');
    assert.ok(shape);
    assert.equal(shape.parse(chunk({ content: ' ore' }))?.choices[0].delta.content, ' ore');
    assert.equal(shape.parse(chunk({ content: 'a much longer delta than twelve' }))?.choices[0].delta.content, 'a much longer delta than twelve');
    assert.deepEqual(shape.parse(chunk({ content: 'x' })), JSON.parse(chunk({ content: 'x' })));
    // Not this shape: another finish_reason, a quote, backslash or control character in the content, a role.
    for (const other of [chunk({ content: 'x' }, 'length'), chunk({ content: 'say "hi"' }), chunk({ content: 'a\\b' }), chunk({ content: 'a\nb' }), chunk({ role: 'assistant', content: 'x' })]) {
      assert.equal(shape.parse(other), undefined, other);
    }
  });

  test('no shape when the content is not plain, not found as written, or not the delta\'s (the probe says so)', () => {
    assert.equal(ChunkShape.learn(chunk({ content: 'a"b' }), 'a"b'), undefined);
    assert.equal(ChunkShape.learn('{"choices":[{"delta":{"content" : "cod"}}]}', 'cod'), undefined);
    // The last "content":"cod" is another object's: the probe reads the delta's unchanged.
    assert.equal(ChunkShape.learn('{"choices":[{"delta":{"content":"cod"}}],"x":{"content":"cod"}}', 'cod'), undefined);
    // A repeated key: JSON.parse keeps the last, and so does the shape.
    const repeated = ChunkShape.learn('{"choices":[{"delta":{"content":"a","content":"cod"}}]}', 'cod');
    assert.equal(repeated?.parse('{"choices":[{"delta":{"content":"a","content":"ore"}}]}')?.choices[0].delta.content, 'ore');
    assert.equal(ChunkShape.learn('{"choices":[{"delta":{"content":"cod","content":"b"}}]}', 'cod'), undefined);
  });

  test('after a learned shape, odd chunks give what JSON.parse gives: usage, errors, tool calls, several choices, escapes, repeats, not JSON', () => {
    const odd = [
      JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } }),
      JSON.stringify({ error: { message: 'boom' } }),
      JSON.stringify({ object: 'error', message: 'boom' }),
      JSON.stringify({ error: false, choices: [] }),
      chunk({ tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '{' } }] }),
      chunk({ function_call: { name: 'f' } }),
      JSON.stringify({ choices: [{ delta: { content: 'a' } }, { delta: { content: 'b' } }] }),
      '{"cho\\u0069ces":[{"delta":{"content":"a"}}]}',
      '{"choices":[{"delta":{"content":"a","content":"b"}}]}',
      '{"choices":[{"delta":{"content":"a"}}]',
      '{"choices":[{"delta":{"content":"a\u0001"}}]}',
      '{"choices":[{"delta":{"content":1}}]}',
      '{"choices":{"0":{"delta":{"content":"a"}}}}',
      '[1]',
      '"text"',
      '\ufeff{}',
      // The shape's own text around a content that breaks it, or a second chunk glued on.
      chunk({ content: 'cod"},"x":{"y":"' }),
      `${chunk({ content: 'a' })}${chunk({ content: 'b' })}`,
    ];
    for (const text of odd) assertSameAsParse([chunk({ content: 'cod' }), chunk({ content: 'ore' }), text, chunk({ content: 'bee' }), '[DONE]']);
  });

  test('a chunk with a quote in its content keeps the shape in hand: the chunks after it still match', () => {
    const events = [chunk({ content: 'cod' }), chunk({ content: 'say "x"' }), chunk({ content: 'a\\b' }), chunk({ content: 'ore' }), chunk({ content: 'bee' }), '[DONE]'];
    assertSameAsParse(events);
    // Counted by what JSON.parse would have been asked: a collector whose JSON.parse is watched.
    const parse = JSON.parse;
    let parsed = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
      parsed += 1;
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      collect(events, true);
    } finally {
      JSON.parse = parse;
    }
    // The first chunk and its probe, the two with a quote or an escape; 'ore' and 'bee' matched the shape.
    assert.equal(parsed, 4);
  });

  test("a result's JSON holds its content and reasoning (getters on its prototype)", () => {
    const collector = new ResponseCollector(0, []);
    for (const [i, data] of [chunk({ reasoning_content: 'why' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }, 'stop'), '[DONE]'].entries()) collector.onSseEvent(data, i + 1);
    const json = JSON.parse(JSON.stringify(collector.result)) as Record<string, unknown>;
    assert.equal(json.content, 'Hello');
    assert.equal(json.reasoning, 'why');
    assert.equal(json.numTokenChunks, collector.result.numTokenChunks);
  });

  test('streams as engines send them give what the JSON.parse path gives', () => {
    const streams: string[][] = [
      // vLLM / SGLang: a role chunk, content chunks, a length stop, the usage chunk.
      [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ', "world"\n' }), chunk({ content: ' \\ é 😀 \u2028' }), chunk({ content: '!' }, 'length'), JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 0 } } }), '[DONE]'],
      // OpenAI: usage null in every chunk, a system_fingerprint, an obfuscation field that changes every chunk.
      [0, 1, 2, 3, 4, 5].map((i) => chunk({ content: `t${i}` }, i === 5 ? 'stop' : null, { usage: null, system_fingerprint: 'fp_1', obfuscation: 'x'.repeat(i) })).concat('[DONE]'),
      // Reasoning models: reasoning_content (vLLM, DeepSeek) or reasoning (Ollama, OpenRouter), then content.
      [chunk({ role: 'assistant', reasoning_content: 'think' }), chunk({ reasoning_content: ' more', content: null }), chunk({ content: 'answer', reasoning_content: null }), chunk({ reasoning: 'r', content: '' }), chunk({ reasoning_content: '', reasoning: 'r2' }), '[DONE]'],
      // Tool calls: the JSON.parse path assembles them; later plain chunks are scanned again.
      [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }), chunk({ content: 'done' }, 'tool_calls'), '[DONE]'],
      // Empty answers: no choice carried anything.
      [chunk({ role: 'assistant', content: '' }), chunk({}, 'stop'), '[DONE]'],
      [JSON.stringify({ id: 'x', choices: [] }), '[DONE]'],
      [chunk(null, 'length'), '[DONE]'],
      // An error event in the middle of a stream (vLLM's shape), and a malformed event.
      [chunk({ content: 'a' }), chunk({ content: 'b' }), JSON.stringify({ object: 'error', message: 'engine dead sk-secret', type: 'InternalServerError' })],
      [chunk({ content: 'a' }), chunk({ content: 'b' }), '{"choices":[{"delta":{"content":"c"}}', chunk({ content: 'd' })],
      // llama-server: timings beside usage, whitespace between tokens, keep-alive empty data.
      ['{ "choices" : [ { "delta" : { "content" : "x" } , "finish_reason" : null } ] }', '', '{"choices":[{"delta":{"content":"y"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2},"timings":{"cache_n":2}}', '[DONE]'],
    ];
    for (const events of streams) assertSameAsParse(events);
  });

  test('property: any chunk-like event sequence gives what the JSON.parse path gives', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.constantFrom('', 'x', ' ore', '"', '\\', '\n', 'a"b', '\u0000', '\ud800', 'a long delta of more than twelve chars'),
    );
    const scalar = fc.oneof(text, fc.constant(null), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean());
    const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), scalar, { maxKeys: 3 }));
    const delta = fc.record(
      { role: fc.constant('assistant'), content: fc.option(text), reasoning_content: fc.option(text), reasoning: fc.option(text), tool_calls: fc.constant(null), refusal: value },
      { requiredKeys: [] },
    );
    const choice = fc.record({ index: fc.constant(0), delta: fc.option(delta), logprobs: value, finish_reason: fc.option(fc.constantFrom('stop', 'length', 'tool_calls', 'st"op')) }, { requiredKeys: [] });
    const event = fc.record(
      { id: fc.constantFrom('chatcmpl-1', 'chatcmpl-2'), object: fc.constantFrom('chat.completion.chunk', 'error'), created: fc.integer(), choices: fc.array(choice, { maxLength: 2 }), usage: fc.constant(null), error: fc.constant(null), extra: value },
      { requiredKeys: ['choices'] },
    );
    // Serialized with or without spaces, and sometimes damaged (a character removed, doubled or replaced).
    const serialized = fc.tuple(event, fc.boolean(), fc.option(fc.tuple(fc.nat(), fc.constantFrom('remove', 'double', 'quote', 'backslash', 'brace')))).map(([e, spaced, damage]) => {
      let s = JSON.stringify(e, null, spaced ? 1 : undefined);
      if (damage !== null) {
        const [at, how] = damage;
        const i = at % s.length;
        s = how === 'remove' ? s.slice(0, i) + s.slice(i + 1) : how === 'double' ? s.slice(0, i + 1) + s.slice(i) : s.slice(0, i) + { quote: '"', backslash: '\\', brace: '}' }[how] + s.slice(i + 1);
      }
      return s;
    });
    // Streams repeat a shape with new contents: each event is followed by copies with other contents.
    const stream = fc.array(fc.tuple(serialized, fc.array(text, { maxLength: 3 })), { minLength: 1, maxLength: 4 }).map((parts) =>
      parts.flatMap(([s, contents]) => [s, ...contents.map((c) => s.replace(/"content":"[^"\\]*"/, `"content":${JSON.stringify(c)}`))]).concat('[DONE]'),
    );
    fc.assert(fc.property(stream, (events) => assertSameAsParse(events)), { numRuns: 3000 });
  });

});
