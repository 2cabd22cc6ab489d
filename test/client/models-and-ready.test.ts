import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { ChatClient } from '../../src/client/chat-client.js';
import { ChatloadError, ServerUnreachableError } from '../../src/errors/index.js';
import { closedPort, startFixedTimingServer } from '../helpers/scripted-server.js';
import { chatRequest, withScriptedClient } from '../helpers/client-test-utils.js';

const TEST_TIMEOUT = { timeout: 5_000 };

describe('listModels and waitReady', () => {
  test('listModels reads ids and max_model_len', TEST_TIMEOUT, async () => {
    const body = JSON.stringify({ object: 'list', data: [{ id: 'a', max_model_len: 4096 }, { id: 'b' }, { nope: 1 }] });
    const script = { headers: { 'content-type': 'application/json' }, actions: [{ write: body }, { end: true as const }] };
    await withScriptedClient(script, { apiKey: 'sk-k' }, async (client, server) => {
      assert.deepEqual(await client.listModels(), [{ id: 'a', maxModelLen: 4096 }, { id: 'b' }]);
      assert.equal(server.requests[0]?.method, 'GET');
      assert.equal(server.requests[0]?.url, '/v1/models');
      assert.equal(server.requests[0]?.headers.authorization, 'Bearer sk-k');
    });
  });

  test('listModels throws ChatloadError on a bad status or body, ServerUnreachableError when refused', TEST_TIMEOUT, async () => {
    const script = (_request: unknown, index: number) =>
      index === 0 ? { status: 503, actions: [{ write: 'loading' }, { end: true as const }] } : { actions: [{ write: '{"data": 5}' }, { end: true as const }] };
    await withScriptedClient(script, {}, async (client) => {
      await assert.rejects(client.listModels(), (error: Error) => error instanceof ChatloadError && /HTTP 503: loading/.test(error.message));
      await assert.rejects(client.listModels(), (error: Error) => error instanceof ChatloadError && /"data" list/.test(error.message));
    });
    const port = await closedPort();
    const client = new ChatClient({ baseUrl: `http://127.0.0.1:${port}`, connections: 1, requestTimeoutMs: 1_000 });
    try {
      await assert.rejects(client.listModels(), (error: Error) => error instanceof ServerUnreachableError && /ECONNREFUSED/.test(error.message));
    } finally {
      await client.close();
    }
  });

  test('waitReady succeeds when the server comes up late', TEST_TIMEOUT, async () => {
    const port = await closedPort();
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ id: 'late-model' }] }));
    });
    const starting = setTimeout(() => server.listen(port, '127.0.0.1'), 300);
    const client = new ChatClient({ baseUrl: `http://127.0.0.1:${port}`, connections: 1, requestTimeoutMs: 1_000 });
    try {
      assert.deepEqual(await client.waitReady(3_000), [{ id: 'late-model' }]);
    } finally {
      clearTimeout(starting);
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    }
  });

  test('waitReady fails with ServerUnreachableError when nothing listens', TEST_TIMEOUT, async () => {
    const port = await closedPort();
    const client = new ChatClient({ baseUrl: `http://127.0.0.1:${port}`, connections: 1, requestTimeoutMs: 1_000 });
    try {
      await assert.rejects(
        client.waitReady(300),
        (error: Error) => error instanceof ServerUnreachableError && /not ready within 300 ms .*ECONNREFUSED/.test(error.message),
      );
      const controller = new AbortController();
      const waiting = client.waitReady(3_000, controller.signal);
      setTimeout(() => controller.abort(new Error('stop now')), 100);
      await assert.rejects(waiting, /stop now/);
    } finally {
      await client.close();
    }
  });
});

describe('startFixedTimingServer', () => {
  test('streams the configured tokens with usage and [DONE], paced by ttft and itl', TEST_TIMEOUT, async () => {
    const server = await startFixedTimingServer({ ttftMs: 50, itlMs: 10, tokens: 6, reasoningTokens: 2, model: 'fixed' });
    const client = new ChatClient({ baseUrl: server.url, connections: 2, requestTimeoutMs: 2_000 });
    try {
      assert.deepEqual(await client.waitReady(1_000), [{ id: 'fixed', maxModelLen: 32768 }]);
      const result = await client.send(chatRequest({ model: 'fixed' }));
      assert.equal(result.error, undefined);
      assert.equal(result.numTokenChunks, 6);
      assert.equal(result.reasoning, ' tok0 tok1');
      assert.equal(result.content, ' tok2 tok3 tok4 tok5');
      assert.equal(result.usage?.completionTokens, 6);
      assert.equal(result.finishReason, 'length');
      // Lower bounds only: the server cannot send earlier than scheduled, however fast the machine.
      assert.ok(result.firstTokenAtMs! - result.sentAtMs >= 49, `ttft ${result.firstTokenAtMs! - result.sentAtMs}`);
      assert.ok(result.tokenChunkTimesMs[5]! - result.sentAtMs >= 99, `last token at ${result.tokenChunkTimesMs[5]! - result.sentAtMs}`);
      const whole = await client.send(chatRequest({ model: 'fixed', stream: false }));
      assert.equal(whole.error, undefined);
      assert.equal(whole.content, ' tok2 tok3 tok4 tok5');
      assert.equal(server.chatBodies.length, 2);
    } finally {
      await server.close();
      await client.close();
    }
  });
});
