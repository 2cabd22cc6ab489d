import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chatRequest, withScriptedClient } from '../helpers/client-test-utils.js';
import { OpenAiResponsesStream, vllmCompletionsStream } from '../helpers/endpoint-streams.js';
import { sseEvent } from '../helpers/scripted-server.js';

const TEST_TIMEOUT = { timeout: 5_000 };
const USAGE = { input: 40, output: 3, cached: 32, reasoning: 1 };

describe('--endpoint responses against OpenAI-format events', () => {
  test('times the output_text deltas, reads the terminal usage, the response id and the finish reason', TEST_TIMEOUT, async () => {
    const s = new OpenAiResponsesStream();
    // Split inside events: the `event:` line arrives in one read and its data in the next.
    const opening = s.opening();
    const script = {
      actions: [
        { write: opening.slice(0, opening.length - 10) },
        { write: opening.slice(opening.length - 10) + s.reasoningDelta('think') },
        { write: s.delta('Hel'), delayMs: 5 },
        { write: s.delta('lo') + s.delta('!'), delayMs: 5 },
        { write: s.closing('Hello!', USAGE) },
        { end: true as const },
      ],
    };
    await withScriptedClient(script, { endpoint: 'responses' }, async (client, server) => {
      const result = await client.send(chatRequest({ maxTokens: 16, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }] }));
      assert.equal(result.error, undefined);
      assert.equal(result.content, 'Hello!');
      assert.equal(result.reasoning, 'think');
      assert.equal(result.numTokenChunks, 4);
      assert.equal(result.firstTokenChunkText, 'think');
      assert.ok(result.firstContentAtMs! >= result.firstReasoningAtMs!);
      assert.deepEqual(result.usage, { promptTokens: 40, completionTokens: 3, cachedTokens: 32, reasoningTokens: 1 });
      assert.equal(result.finishReason, 'stop');
      assert.equal(result.responseId, s.id);
      const request = server.requests[0]!;
      assert.equal(request.url, '/v1/responses');
      const body = JSON.parse(request.body) as Record<string, unknown>;
      assert.deepEqual(body.input, [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }]);
      assert.equal(body.max_output_tokens, 16);
      assert.equal(body.store, false, 'the whole history goes each turn: nothing needs keeping');
      assert.equal(body.previous_response_id, undefined);
      assert.equal(body.messages, undefined);
      assert.equal(body.stream_options, undefined);
    });
  });

  test('with previous_response_id only the messages the server does not hold are sent, with store: true', TEST_TIMEOUT, async () => {
    const s = new OpenAiResponsesStream('resp_second');
    const script = { actions: [{ write: s.opening() + s.delta('ok') + s.closing('ok', USAGE) }, { end: true as const }] };
    await withScriptedClient(script, { endpoint: 'responses' }, async (client, server) => {
      const messages = [
        { role: 'system' as const, content: 'sys' },
        { role: 'user' as const, content: 'one' },
        { role: 'assistant' as const, content: 'answer one' },
        { role: 'user' as const, content: 'two' },
      ];
      const result = await client.send(chatRequest({ messages, storeResponse: true, previousResponse: { id: 'resp_first', messagesHeld: 3 } }));
      assert.equal(result.error, undefined);
      assert.equal(result.responseId, 'resp_second');
      const body = JSON.parse(server.requests[0]!.body) as Record<string, unknown>;
      assert.equal(body.previous_response_id, 'resp_first');
      assert.equal(body.store, true);
      assert.deepEqual(body.input, [{ role: 'user', content: 'two' }]);
    });
  });

  test('image parts become input_image items; text parts input_text', TEST_TIMEOUT, async () => {
    const s = new OpenAiResponsesStream();
    const script = { actions: [{ write: s.opening() + s.delta('a cat') + s.closing('a cat', USAGE) }, { end: true as const }] };
    await withScriptedClient(script, { endpoint: 'responses' }, async (client, server) => {
      const content = [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ];
      const result = await client.send(chatRequest({ messages: [{ role: 'user', content: content as unknown as string }] }));
      assert.equal(result.error, undefined);
      const body = JSON.parse(server.requests[0]!.body) as { input: unknown };
      assert.deepEqual(body.input, [
        { role: 'user', content: [{ type: 'input_text', text: 'what is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }] },
      ]);
    });
  });

  test('response.incomplete at max_output_tokens is finish reason length, not a failure', TEST_TIMEOUT, async () => {
    const s = new OpenAiResponsesStream();
    const script = { actions: [{ write: s.opening() + s.delta('cut') + s.closing('cut', USAGE, 'incomplete') }, { end: true as const }] };
    await withScriptedClient(script, { endpoint: 'responses' }, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined);
      assert.equal(result.finishReason, 'length');
      assert.equal(result.usage?.completionTokens, 3);
    });
  });

  test('response.failed and an error event fail as malformed_stream with the server\'s message; a stream cut before its terminal event is truncated', TEST_TIMEOUT, async () => {
    const s = new OpenAiResponsesStream();
    const failed = s.event('response.failed', { response: { ...s.response('failed', '', null), error: { code: 'server_error', message: 'The model crashed.' } } });
    const errorEvent = s.event('error', { code: 'rate_limit_exceeded', message: 'Slow down.', param: null });
    const scripts = [
      { actions: [{ write: s.opening() + s.delta('par') + failed }, { end: true as const }] },
      { actions: [{ write: s.opening() + errorEvent }, { end: true as const }] },
      { actions: [{ write: s.opening() + s.delta('par') }, { end: true as const }] },
    ];
    await withScriptedClient((_request, index) => scripts[index]!, { endpoint: 'responses' }, async (client) => {
      const failedResult = await client.send(chatRequest());
      assert.equal(failedResult.error?.kind, 'malformed_stream');
      assert.match(failedResult.error!.message, /response\.failed: The model crashed\./);
      assert.equal(failedResult.content, 'par', 'what came before the failure is kept');
      const errorResult = await client.send(chatRequest());
      assert.equal(errorResult.error?.kind, 'malformed_stream');
      assert.match(errorResult.error!.message, /Slow down\./);
      const cut = await client.send(chatRequest());
      assert.equal(cut.error?.kind, 'truncated_stream');
      assert.match(cut.error!.message, /response\.completed/);
    });
  });

  test('a completed response with no output text is an empty answer', TEST_TIMEOUT, async () => {
    const s = new OpenAiResponsesStream();
    const script = { actions: [{ write: s.opening() + s.event('response.completed', { response: s.response('completed', '', USAGE) }) }, { end: true as const }] };
    await withScriptedClient(script, { endpoint: 'responses' }, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'empty_answer');
    });
  });

  test('a non-streamed Response body: its output text, usage and id', TEST_TIMEOUT, async () => {
    const s = new OpenAiResponsesStream('resp_whole');
    const body = JSON.stringify(s.response('completed', 'Whole answer.', USAGE));
    const script = { headers: { 'content-type': 'application/json' }, actions: [{ write: body }, { end: true as const }] };
    await withScriptedClient(script, { endpoint: 'responses' }, async (client, server) => {
      const result = await client.send(chatRequest({ stream: false }));
      assert.equal(result.error, undefined);
      assert.equal(result.content, 'Whole answer.');
      assert.equal(result.numTokenChunks, 0);
      assert.equal(result.usage?.cachedTokens, 32);
      assert.equal(result.responseId, 'resp_whole');
      assert.equal((JSON.parse(server.requests[0]!.body) as { stream: boolean }).stream, false);
    });
  });

  test("an HTTP 400 previous_response_not_found is an http_status failure naming OpenAI's message", TEST_TIMEOUT, async () => {
    const error = { error: { message: "Previous response with id 'resp_gone' not found.", type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } };
    const script = { status: 400, headers: { 'content-type': 'application/json' }, actions: [{ write: JSON.stringify(error) }, { end: true as const }] };
    await withScriptedClient(script, { endpoint: 'responses' }, async (client) => {
      const result = await client.send(chatRequest({ storeResponse: true, previousResponse: { id: 'resp_gone', messagesHeld: 0 } }));
      assert.equal(result.error?.kind, 'http_status');
      assert.equal(result.error?.status, 400);
      assert.match(result.error!.message, /Previous response with id 'resp_gone' not found/);
    });
  });
});

describe('--endpoint completions against vLLM-format chunks', () => {
  test('sends the prompt text, times choices[0].text deltas and reads the usage chunk', TEST_TIMEOUT, async () => {
    const script = { actions: [{ write: vllmCompletionsStream(['Hel', 'lo'], { prompt: 20, cached: 16 }) }, { end: true as const }] };
    await withScriptedClient(script, { endpoint: 'completions' }, async (client, server) => {
      const prompt = '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n';
      const result = await client.send(chatRequest({ prompt, maxTokens: 2 }));
      assert.equal(result.error, undefined);
      assert.equal(result.content, 'Hello');
      assert.equal(result.numTokenChunks, 2);
      assert.equal(result.finishReason, 'length');
      assert.deepEqual(result.usage, { promptTokens: 20, completionTokens: 2, cachedTokens: 16 });
      const request = server.requests[0]!;
      assert.equal(request.url, '/v1/completions');
      const body = JSON.parse(request.body) as Record<string, unknown>;
      assert.equal(body.prompt, prompt);
      assert.equal(body.messages, undefined);
      assert.equal(body.max_tokens, 2);
      assert.deepEqual(body.stream_options, { include_usage: true });
    });
  });

  test('an error object in the stream fails as malformed_stream; a request without its prompt is not sent', TEST_TIMEOUT, async () => {
    const script = { actions: [{ write: sseEvent({ object: 'error', message: 'engine dead' }) }, { end: true as const }] };
    await withScriptedClient(script, { endpoint: 'completions' }, async (client, server) => {
      const result = await client.send(chatRequest({ prompt: 'x' }));
      assert.equal(result.error?.kind, 'malformed_stream');
      assert.match(result.error!.message, /engine dead/);
      const unsent = await client.send(chatRequest());
      assert.equal(unsent.error?.kind, 'other');
      assert.match(unsent.error!.message, /prompt/);
      assert.equal(server.requests.length, 1);
    });
  });
});

describe('image bytes in errors', () => {
  test("a server's error that quotes the image (as vLLM's invalid-image 400 does) keeps no image bytes in the record", TEST_TIMEOUT, async () => {
    const bytes = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB'.repeat(20);
    const error = { error: { message: `Failed to load image data:image/png;base64,${bytes}: cannot identify image file`, type: 'BadRequestError', code: 400 } };
    const script = { status: 400, headers: { 'content-type': 'application/json' }, actions: [{ write: JSON.stringify(error) }, { end: true as const }] };
    await withScriptedClient(script, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'http_status');
      assert.match(result.error!.message, /Failed to load image data:image\/png;base64,\[image data\]: cannot identify/);
      assert.ok(!JSON.stringify(result.error).includes('iVBORw0KGgo'), 'no image bytes in the message or the body excerpt');
    });
  });
});
