import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatClient } from '../../src/client/chat-client.js';
import { ConfigError } from '../../src/errors/index.js';
import { chunkJson, sseEvent, usageChunkJson } from '../helpers/scripted-server.js';
import { chatRequest, withScriptedClient } from '../helpers/client-test-utils.js';
import { llamacppStream, llamacppUsage } from '../helpers/llamacpp-stream.js';

const TEST_TIMEOUT = { timeout: 5_000 };

/** The usual OpenAI stream: role chunk, tokens, a finish chunk, the usage chunk (empty choices), [DONE]. */
function normalStream(tokens: string[]): string {
  return (
    sseEvent(chunkJson({ role: 'assistant', content: '' })) +
    tokens.map((token) => sseEvent(chunkJson({ content: token }))).join('') +
    sseEvent(chunkJson({}, 'stop')) +
    sseEvent(usageChunkJson(12, tokens.length, 8)) +
    sseEvent('[DONE]')
  );
}

describe('ChatClient streaming', () => {
  test('records content, per-chunk times, usage and finish reason', TEST_TIMEOUT, async () => {
    await withScriptedClient({ actions: [{ write: normalStream(['Hel', 'lo', '!']) }, { end: true }] }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined);
      assert.equal(result.httpStatus, 200);
      assert.equal(result.content, 'Hello!');
      assert.equal(result.reasoning, '');
      assert.equal(result.numTokenChunks, 3);
      assert.equal(result.tokenChunkTimesMs.length, 3);
      assert.equal(result.firstTokenChunkText, 'Hel');
      assert.equal(result.finishReason, 'stop');
      assert.deepEqual(result.usage, { promptTokens: 12, completionTokens: 3, cachedTokens: 8 });
      assert.ok(result.headersAtMs !== undefined && result.headersAtMs >= result.sentAtMs);
      assert.equal(result.firstTokenAtMs, result.tokenChunkTimesMs[0]);
      assert.equal(result.firstContentAtMs, result.firstTokenAtMs);
      assert.equal(result.firstReasoningAtMs, undefined);
      assert.ok(result.firstTokenAtMs !== undefined && result.firstTokenAtMs >= result.headersAtMs);
      assert.ok(result.doneAtMs >= result.tokenChunkTimesMs[2]!);
    });
  });

  test('sends the OpenAI body, headers and path (base URL with or without /v1)', TEST_TIMEOUT, async () => {
    const script = { actions: [{ write: normalStream(['x']) }, { end: true as const }] };
    await withScriptedClient(script, { apiKey: 'sk-abc', headers: { 'X-Team': 'perf' } }, async (_client, server) => {
      const client = new ChatClient({ baseUrl: `${server.url}/v1/`, apiKey: 'sk-abc', headers: { 'X-Team': 'perf' }, connections: 1, requestTimeoutMs: 2_000 });
      try {
        const result = await client.send(
          chatRequest({
            maxTokens: 64, minTokens: 64, ignoreEos: true, temperature: 0, seed: 7, conversationId: 'CONV_ID_3',
            extraBody: { top_p: 0.5, temperature: 0.2 },
          }),
        );
        assert.equal(result.error, undefined);
      } finally {
        await client.close();
      }
      const request = server.requests[0]!;
      assert.equal(request.method, 'POST');
      assert.equal(request.url, '/v1/chat/completions');
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(request.headers.authorization, 'Bearer sk-abc');
      assert.equal(request.headers['x-team'], 'perf');
      assert.equal(request.headers['x-session-id'], 'CONV_ID_3');
      assert.deepEqual(JSON.parse(request.body), {
        model: 'test-model',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        max_tokens: 64,
        min_tokens: 64,
        ignore_eos: true,
        temperature: 0.2,
        seed: 7,
        stream_options: { include_usage: true },
        conversation_id: 'CONV_ID_3',
        top_p: 0.5,
      });
    });
  });

  test('handles data lines split across TCP writes, even inside a UTF-8 character', TEST_TIMEOUT, async () => {
    const bytes = Buffer.from(normalStream(['h€', 'llo 🦜']));
    const euro = bytes.indexOf(Buffer.from('€')) + 1;
    const parrot = bytes.indexOf(Buffer.from('🦜')) + 2;
    const actions = [
      { write: bytes.subarray(0, euro) },
      { write: bytes.subarray(euro, parrot), delayMs: 30 },
      { write: bytes.subarray(parrot), delayMs: 30 },
      { end: true as const },
    ];
    await withScriptedClient({ actions }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined);
      assert.equal(result.content, 'h€llo 🦜');
      assert.equal(result.numTokenChunks, 2);
      // Each token's event completed in a later write (a slow client may read two writes at once: hence >=).
      assert.ok(result.tokenChunkTimesMs[1]! >= result.tokenChunkTimesMs[0]!);
      assert.ok(result.tokenChunkTimesMs[0]! >= result.headersAtMs!);
    });
  });

  test('accepts CRLF, comment lines and multi-line data', TEST_TIMEOUT, async () => {
    const first = JSON.stringify(chunkJson({ content: 'a' }));
    const split = JSON.stringify(chunkJson({ content: 'b' })).replace('"delta":', '"delta":\r\ndata: ');
    const body = `: ping\r\n\r\ndata: ${first}\r\n\r\nevent: message\r\nid: 2\r\ndata: ${split}\r\n\r\n: ping\r\ndata: [DONE]\r\n\r\n`;
    await withScriptedClient({ actions: [{ write: body }, { end: true }] }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined);
      assert.equal(result.content, 'ab');
      assert.equal(result.numTokenChunks, 2);
    });
  });

  test('takes the first token from reasoning_content or reasoning, and records both streams', TEST_TIMEOUT, async () => {
    const body =
      sseEvent(chunkJson({ role: 'assistant', content: null, reasoning_content: 'think ' })) +
      sseEvent(chunkJson({ reasoning: 'more' })) +
      sseEvent(chunkJson({ content: 'answer' }, 'stop')) +
      sseEvent({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, completion_tokens_details: { reasoning_tokens: 2 } } }) +
      sseEvent('[DONE]');
    const actions = [{ write: body.slice(0, body.indexOf('data: ', 10)) }, { write: body.slice(body.indexOf('data: ', 10)), delayMs: 30 }, { end: true as const }];
    await withScriptedClient({ actions }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined);
      assert.equal(result.reasoning, 'think more');
      assert.equal(result.content, 'answer');
      assert.equal(result.numTokenChunks, 3);
      assert.equal(result.firstTokenChunkText, 'think ');
      assert.equal(result.firstTokenAtMs, result.firstReasoningAtMs);
      assert.ok(result.firstContentAtMs! >= result.firstReasoningAtMs!);
      assert.deepEqual(result.usage, { promptTokens: 5, completionTokens: 3, reasoningTokens: 2 });
    });
  });

  test('parses a non-streaming reply; its first token time is when the body completed', TEST_TIMEOUT, async () => {
    const reply = {
      id: 'x', object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'full answer', reasoning_content: 'why' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 4, completion_tokens: 2 },
    };
    const text = JSON.stringify(reply);
    const actions = [{ write: text.slice(0, 20) }, { write: text.slice(20), delayMs: 20 }, { end: true as const }];
    await withScriptedClient({ headers: { 'content-type': 'application/json' }, actions }, {}, async (client, server) => {
      const result = await client.send(chatRequest({ stream: false }));
      assert.equal(result.error, undefined);
      assert.equal(result.content, 'full answer');
      assert.equal(result.reasoning, 'why');
      assert.equal(result.finishReason, 'length');
      assert.equal(result.numTokenChunks, 0, 'one body is no chunk: output_num_chunks is 0 for a non-streamed reply, as in the reference');
      assert.deepEqual(result.tokenChunkTimesMs, [result.doneAtMs]);
      assert.equal(result.firstTokenAtMs, result.doneAtMs);
      assert.deepEqual(result.usage, { promptTokens: 4, completionTokens: 2 });
      assert.equal(JSON.parse(server.requests[0]!.body).stream_options, undefined);
    });
  });

  test('treats a JSON reply to a streaming request as a non-streaming reply', TEST_TIMEOUT, async () => {
    const reply = { choices: [{ message: { content: 'ignored stream' }, finish_reason: 'stop' }] };
    const script = { headers: { 'content-type': 'application/json; charset=utf-8' }, actions: [{ write: JSON.stringify(reply) }, { end: true as const }] };
    await withScriptedClient(script, {}, async (client) => {
      const result = await client.send(chatRequest({ stream: true }));
      assert.equal(result.error, undefined);
      assert.equal(result.content, 'ignored stream');
      assert.equal(result.numTokenChunks, 0);
    });
  });

  test('reuses the keep-alive connection for the next request', TEST_TIMEOUT, async () => {
    await withScriptedClient({ actions: [{ write: normalStream(['a']) }, { end: true }] }, { connections: 1 }, async (client, server) => {
      for (let i = 0; i < 3; i++) {
        assert.equal((await client.send(chatRequest())).error, undefined);
        // The body's end may come just after [DONE]: the connection is free (reusable) once it has.
        while (client.drainingResponses > 0) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      assert.equal(new Set(server.requests.map((request) => request.remotePort)).size, 1);
    });
  });

  test('resolves at [DONE] even when the server keeps the response open', TEST_TIMEOUT, async () => {
    // The response never ends; had send() waited for its end, the request timeout would have ended it instead, as
    // timeout_total. So no error is the behaviour, with no clock to read.
    await withScriptedClient({ actions: [{ write: normalStream(['a', 'b']) }] }, { requestTimeoutMs: 3_000 }, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(result.content, 'ab');
      assert.ok(result.doneAtMs >= result.sentAtMs);
    });
  });

  test('rejects a base URL that is not http(s)', () => {
    assert.throws(() => new ChatClient({ baseUrl: 'ftp://x', connections: 1, requestTimeoutMs: 1 }), ConfigError);
    assert.throws(() => new ChatClient({ baseUrl: 'not a url', connections: 1, requestTimeoutMs: 1 }), ConfigError);
    assert.throws(() => new ChatClient({ baseUrl: 'http://127.0.0.1:1', connections: 0, requestTimeoutMs: 1 }), ConfigError);
  });
});

describe('llama-server stream shapes', () => {
  test('usage only in the last content chunk, cached tokens from timings.cache_n', TEST_TIMEOUT, async () => {
    await withScriptedClient(llamacppStream(['Hel', 'lo', '!'], 120, 96), {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined);
      assert.equal(result.content, 'Hello!');
      assert.equal(result.numTokenChunks, 3, 'the role chunk with content null carries no token');
      assert.equal(result.finishReason, 'stop');
      assert.deepEqual(result.usage, { promptTokens: 120, completionTokens: 3, cachedTokens: 96 });
    });
  });

  test('prompt_tokens_details wins over timings.cache_n when both are there', TEST_TIMEOUT, async () => {
    const { usage, timings } = llamacppUsage(50, 1, 10);
    const reply = { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }], usage: { ...usage, prompt_tokens_details: { cached_tokens: 32 } }, timings };
    await withScriptedClient({ headers: { 'content-type': 'application/json' }, actions: [{ write: JSON.stringify(reply) }, { end: true }] }, {}, async (client) => {
      const result = await client.send(chatRequest({ stream: false }));
      assert.equal(result.usage?.cachedTokens, 32);
    });
  });
});
