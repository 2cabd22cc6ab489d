import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatClient } from '../../src/client/chat-client.js';
import { MAX_RESPONSE_CHARS } from '../../src/client/response-collector.js';
import { isRetryable } from '../../src/client/retry.js';
import type { StreamResult } from '../../src/client/types.js';
import { chunkJson, closedPort, sseEvent } from '../helpers/scripted-server.js';
import { chatRequest, failingLookup, withScriptedClient } from '../helpers/client-test-utils.js';

const TEST_TIMEOUT = { timeout: 5_000 };
const token = (text: string): string => sseEvent(chunkJson({ content: text }));

function assertOneLine(result: StreamResult): void {
  assert.ok(result.error, 'expected an error');
  assert.ok(!/[\r\n]/.test(result.error.message), `message is not one line: ${result.error.message}`);
  assert.ok(result.error.message.length > 0);
}

describe('ChatClient error taxonomy', () => {
  test('a closed port is connect_refused (retryable)', TEST_TIMEOUT, async () => {
    const port = await closedPort();
    const client = new ChatClient({ baseUrl: `http://127.0.0.1:${port}`, connections: 1, requestTimeoutMs: 2_000 });
    try {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'connect_refused');
      assert.equal(result.headersAtMs, undefined);
      assert.equal(isRetryable(result.error), true);
      assertOneLine(result);
    } finally {
      await client.close();
    }
  });

  test('a host that does not resolve is dns (not retryable)', TEST_TIMEOUT, async () => {
    // A local resolver that fails like getaddrinfo does, so no DNS query leaves the machine.
    const lookup = failingLookup();
    const client = new ChatClient({ baseUrl: 'http://nonexistent.invalid:8000', connections: 1, requestTimeoutMs: 2_000, lookup });
    try {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'dns');
      assert.equal(isRetryable(result.error), false);
      assertOneLine(result);
    } finally {
      await client.close();
    }
  });

  for (const how of ['reset', 'close'] as const) {
    test(`a socket ${how} mid-stream is connect_reset and keeps the partial answer`, TEST_TIMEOUT, async () => {
      const script = { actions: [{ write: token('hel') + token('lo') }, { destroy: how, delayMs: 30 }] };
      await withScriptedClient(script, {}, async (client) => {
        const result = await client.send(chatRequest());
        assert.equal(result.error?.kind, 'connect_reset');
        assert.equal(result.content, 'hello');
        assert.equal(result.numTokenChunks, 2);
        assert.ok(result.doneAtMs >= result.tokenChunkTimesMs[1]!);
        assertOneLine(result);
      });
    });
  }

  test('HTTP 500 is http_status with a 200-character body excerpt', TEST_TIMEOUT, async () => {
    const body = `{"error":{"message":"${'boom '.repeat(100)}"}}`;
    const script = { status: 500, headers: { 'content-type': 'application/json' }, actions: [{ write: body }, { end: true as const }] };
    await withScriptedClient(script, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'http_status');
      assert.equal(result.error?.status, 500);
      assert.equal(result.httpStatus, 500);
      assert.equal(result.error?.bodyExcerpt?.length, 200);
      assert.ok(result.error?.bodyExcerpt?.startsWith('{"error":{"message":"boom boom'));
      assert.ok(result.error?.message.startsWith('HTTP 500'));
      assert.equal(isRetryable(result.error), true);
      assertOneLine(result);
    });
  });

  test('HTTP 429 parses Retry-After in seconds and as an HTTP date', TEST_TIMEOUT, async () => {
    const date = new Date(Date.now() + 60_000).toUTCString();
    const script = (_request: unknown, index: number) => ({
      status: 429,
      headers: { 'content-type': 'text/plain', 'retry-after': index === 0 ? '3' : date },
      actions: [{ write: 'slow down' }, { end: true as const }],
    });
    await withScriptedClient(script, {}, async (client) => {
      const seconds = await client.send(chatRequest());
      assert.equal(seconds.error?.kind, 'http_status');
      assert.equal(seconds.error?.status, 429);
      assert.equal(seconds.retryAfterMs, 3_000);
      assert.equal(seconds.error?.retryAfterMs, 3_000);
      assert.equal(seconds.error?.bodyExcerpt, 'slow down');
      assert.equal(isRetryable(seconds.error), true);
      const dated = await client.send(chatRequest());
      assert.ok(dated.retryAfterMs! > 50_000 && dated.retryAfterMs! <= 60_000, `retryAfterMs ${dated.retryAfterMs}`);
    });
  });

  test('HTTP 400 and 404 are not retryable', TEST_TIMEOUT, async () => {
    const script = (_request: unknown, index: number) => ({ status: index === 0 ? 400 : 404, actions: [{ end: true as const }] });
    await withScriptedClient(script, {}, async (client) => {
      for (const status of [400, 404]) {
        const result = await client.send(chatRequest());
        assert.equal(result.error?.status, status);
        assert.equal(isRetryable(result.error), false);
      }
    });
  });

  test('a stall after the first token is timeout_idle, with the partial answer kept', TEST_TIMEOUT, async () => {
    await withScriptedClient({ actions: [{ write: token('partial') }] }, { idleTimeoutMs: 150 }, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'timeout_idle');
      assert.equal(result.content, 'partial');
      assert.ok(result.doneAtMs - result.tokenChunkTimesMs[0]! >= 149);
      assertOneLine(result);
    });
  });

  test('a server that never answers is timeout_ttft', TEST_TIMEOUT, async () => {
    await withScriptedClient({ noHeaders: true }, { ttftTimeoutMs: 150 }, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'timeout_ttft');
      assert.equal(result.headersAtMs, undefined);
      assert.ok(result.doneAtMs - result.sentAtMs >= 149);
    });
  });

  test('keep-alive comments without a token still end in timeout_ttft', TEST_TIMEOUT, async () => {
    // Comments every 20 ms keep the idle clock (600 ms) from firing but not the TTFT one (1,200 ms). The server shares
    // this event loop: the idle margin must outlast a stalled loop on a loaded machine (100 ms did not, issue 17).
    const actions = Array.from({ length: 100 }, () => ({ write: ': ping\n\n', delayMs: 20 }));
    await withScriptedClient({ actions }, { ttftTimeoutMs: 1_200, idleTimeoutMs: 600 }, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'timeout_ttft');
    });
  });

  test('with only requestTimeoutMs, a server that never answers is timeout_total', TEST_TIMEOUT, async () => {
    await withScriptedClient({ noHeaders: true }, { requestTimeoutMs: 150 }, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'timeout_total');
    });
  });

  test('a slow trickle past the request timeout is timeout_total', TEST_TIMEOUT, async () => {
    // 2 s of tokens against 1 s: a token arrives before the timeout however loaded the machine (300 ms was tight).
    const actions = Array.from({ length: 100 }, (_, i) => ({ write: token(`t${i} `), delayMs: 20 }));
    await withScriptedClient({ actions }, { requestTimeoutMs: 1_000 }, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'timeout_total');
      assert.ok(result.numTokenChunks > 0 && result.numTokenChunks < 100);
      assert.ok(result.content.startsWith('t0 '));
    });
  });

  test('a data line that is not JSON is malformed_stream', TEST_TIMEOUT, async () => {
    const script = { actions: [{ write: `${token('ok')}data: {not json\n\n${token('late')}` }, { end: true as const }] };
    await withScriptedClient(script, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'malformed_stream');
      assert.equal(result.content, 'ok');
      assert.equal(isRetryable(result.error), false);
      assertOneLine(result);
    });
  });

  test('an error object in the stream is malformed_stream with its message', TEST_TIMEOUT, async () => {
    const error = sseEvent({ error: { object: 'error', message: 'KV cache\nexhausted', code: 500 } });
    await withScriptedClient({ actions: [{ write: token('a') + error }, { end: true }] }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'malformed_stream');
      assert.match(result.error?.message ?? '', /KV cache exhausted/);
      assertOneLine(result);
    });
  });

  test('a body that ends without [DONE] is truncated_stream, keeping what came', TEST_TIMEOUT, async () => {
    const script = { actions: [{ write: token('a') + token('b') }, { write: 'data: {"cho', delayMs: 10 }, { end: true as const }] };
    await withScriptedClient(script, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'truncated_stream');
      assert.equal(result.content, 'ab');
      assert.equal(result.tokenChunkTimesMs.length, 2);
      assert.equal(isRetryable(result.error), true);
    });
  });

  test('a 200 with an HTML page on a streamed request is malformed_stream naming the content type, and is not retried (issue #35)', TEST_TIMEOUT, async () => {
    const page = { headers: { 'content-type': 'text/html; charset=utf-8' }, actions: [{ write: '<html><body><h1>Sign in to continue</h1></body></html>' }, { end: true as const }] };
    await withScriptedClient(page, {}, async (client, server) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'malformed_stream');
      assert.match(result.error?.message ?? '', /HTTP 200 with Content-Type text\/html; charset=utf-8, not a chat completion: <html><body><h1>Sign in to continue/);
      assert.equal(isRetryable(result.error!), false);
      assert.equal(server.requests.filter((r) => r.method === 'POST').length, 1);
      assertOneLine(result);
    });
  });

  test("the caller's signal aborts a request in flight, and a pre-aborted signal sends nothing", TEST_TIMEOUT, async () => {
    await withScriptedClient({ actions: [{ write: token('a') }] }, {}, async (client, server) => {
      const controller = new AbortController();
      // Aborted once the first token is in (not after a fixed delay, which a loaded machine can outrun).
      const pending = client.send({ ...chatRequest(), onFirstToken: () => setImmediate(() => controller.abort()) }, controller.signal);
      const result = await pending;
      assert.equal(result.error?.kind, 'aborted');
      assert.equal(result.content, 'a');
      assert.equal(isRetryable(result.error), false);
      const before = server.requests.length;
      const early = await client.send(chatRequest(), AbortSignal.abort());
      assert.equal(early.error?.kind, 'aborted');
      assert.equal(server.requests.length, before);
    });
  });

  test('the api key never appears in a result, even when the server echoes it', TEST_TIMEOUT, async () => {
    const secret = 'sk-secret-123';
    const script = (request: { headers: Record<string, unknown> }, index: number) =>
      index === 0
        ? { status: 401, headers: { 'content-type': 'text/plain' }, actions: [{ write: `bad key: ${String(request.headers.authorization)}\nfor ${secret}` }, { end: true as const }] }
        : { actions: [{ write: sseEvent({ error: { message: `quota for ${secret}` } }) }, { end: true as const }] };
    await withScriptedClient(script, { apiKey: secret }, async (client) => {
      const results = [await client.send(chatRequest()), await client.send(chatRequest())];
      const refusedPort = await closedPort();
      const refused = new ChatClient({ baseUrl: `http://127.0.0.1:${refusedPort}`, apiKey: secret, connections: 1, requestTimeoutMs: 1_000 });
      try {
        results.push(await refused.send(chatRequest()));
      } finally {
        await refused.close();
      }
      assert.deepEqual(results.map((result) => result.error?.kind), ['http_status', 'malformed_stream', 'connect_refused']);
      for (const result of results) {
        assert.ok(!JSON.stringify(result).includes(secret), JSON.stringify(result));
        assertOneLine(result);
      }
    });
  });

  test('an answer is bounded like a message: over 16 Mi characters in all (events each under it) fails as other', { timeout: 20_000 }, async () => {
    const half = token('x'.repeat(MAX_RESPONSE_CHARS / 2 + 1));
    await withScriptedClient({ actions: [{ write: half }, { write: half }, { write: sseEvent('[DONE]') }, { end: true }] }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'other');
      assert.equal(result.error?.message, `response text exceeds ${MAX_RESPONSE_CHARS} characters`);
      assert.equal(MAX_RESPONSE_CHARS, 16 * 1024 * 1024);
    });
  });
});
