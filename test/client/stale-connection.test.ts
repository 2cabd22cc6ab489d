// Connection reuse that survives servers that close (issue #12): a request written onto a kept-alive connection the
// server already closed is resent at once on a fresh connection; a fresh connection's reset is still a failure.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatClient } from '../../src/client/chat-client.js';
import { buildChatBody, CHUNKED_BODY_BYTES, encodeChatBody, prepareMessageBytes } from '../../src/client/request-body.js';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { readFileSync } from 'node:fs';
import { startCloseAfterStreamServer } from '../helpers/close-after-stream-server.js';
import { chatRequest } from '../helpers/client-test-utils.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { modelsResponse, startRawServer } from '../helpers/raw-server.js';
import { tempDir } from '../helpers/tmp.js';

const chatPosts = (requests: readonly { method: string; path: string }[]): number =>
  requests.filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions')).length;

describe('stale keep-alive connections', () => {
  test('a request written onto a connection the server is closing is resent on a fresh one, and reuse stops', { timeout: 10_000 }, async () => {
    // A FIN 200 ms after the stream: the second request always reaches the closing socket first.
    const server = await startCloseAfterStreamServer({ finDelayMs: 200 });
    const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 5_000 });
    try {
      const first = await client.send(chatRequest());
      assert.equal(first.error, undefined);
      assert.equal(first.staleConnectionResends, undefined);
      const second = await client.send(chatRequest());
      assert.equal(second.error, undefined, second.error?.message);
      assert.equal(second.content, 'ok ok ok ok');
      assert.equal(second.staleConnectionResends, 1);
      assert.equal(server.dropped, 1, 'the server dropped the request written onto its closing socket');
      assert.deepEqual(client.connectionReuse, { staleConnectionResends: 1, reuseConnections: false });
      // From now on each request opens its own connection (`connection: close`), so nothing more is dropped.
      for (let i = 0; i < 3; i++) assert.equal((await client.send(chatRequest())).error, undefined);
      assert.equal(server.dropped, 1);
      assert.equal(server.connections, 5, 'one kept-alive connection for the first two sends, then one per request');
      assert.equal(server.requests.at(-1)?.headers.connection, 'close');
    } finally {
      await server.close();
      await client.close();
    }
  });

  test('a connection reset before any byte on a FRESH connection is still connect_reset, not resent', { timeout: 10_000 }, async () => {
    const server = await startRawServer((request, socket) => {
      if (request.method === 'GET') socket.write(modelsResponse());
      else socket.resetAndDestroy();
    });
    const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 5_000 });
    try {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'connect_reset');
      assert.equal(result.staleConnectionResends, undefined);
      assert.equal(chatPosts(server.requests), 1, 'sent once');
      assert.deepEqual(client.connectionReuse, { staleConnectionResends: 0, reuseConnections: true });
    } finally {
      await server.close();
      await client.close();
    }
  });

  test('a close after response bytes arrived is a failure, not a resend', { timeout: 10_000 }, async () => {
    let chats = 0;
    const server = await startRawServer((request, socket) => {
      if (request.method === 'GET') {
        socket.write(modelsResponse());
        return;
      }
      chats += 1;
      // The first reply is complete and kept alive; the second is cut inside its status line.
      if (chats === 1) socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
      else socket.end('HTTP/1.1 200 O');
    });
    const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 5_000 });
    try {
      await client.send(chatRequest({ stream: false }));
      const result = await client.send(chatRequest({ stream: false }));
      assert.equal(result.error?.kind, 'connect_reset');
      assert.equal(result.staleConnectionResends, undefined);
      assert.equal(chats, 2, 'not resent: the server had started answering');
    } finally {
      await server.close();
      await client.close();
    }
  });

  test('a keep-alive timeout that races a late request resends it but keeps reusing connections', { timeout: 10_000 }, async () => {
    // A server whose idle timeout fires just as a request arrives on a connection idle for over a second.
    let lastDoneAt = 0;
    let dropped = 0;
    const server = await startRawServer((request, socket) => {
      if (request.method === 'GET') {
        socket.write(modelsResponse());
        return;
      }
      if (lastDoneAt > 0 && performance.now() - lastDoneAt > 1_000 && dropped === 0) {
        dropped += 1;
        socket.end();
        return;
      }
      const body = '{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}';
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      lastDoneAt = performance.now();
    });
    const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 5_000 });
    try {
      assert.equal((await client.send(chatRequest({ stream: false }))).error, undefined);
      await new Promise((resolve) => setTimeout(resolve, 1_150));
      const late = await client.send(chatRequest({ stream: false }));
      assert.equal(late.error, undefined, late.error?.message);
      assert.equal(late.staleConnectionResends, 1);
      assert.deepEqual(client.connectionReuse, { staleConnectionResends: 1, reuseConnections: true });
    } finally {
      await server.close();
      await client.close();
    }
  });

  for (const finDelayMs of [0.3, 200]) {
    test(`a default run (-p 1) against a server that closes ${finDelayMs} ms after every stream completes every request with 0 retries`, { timeout: 30_000 }, async () => {
      const server = await startCloseAfterStreamServer({ finDelayMs });
      const dir = tempDir('stale');
      try {
        const result = await runBenchmark({ url: server.url, inputFile: writeSyntheticDataset(dir, 8, 2), outputDir: dir });
        assert.equal(result.summary.failed, 0);
        assert.equal(result.summary.completed, 16);
        assert.deepEqual(result.load.conversations, { total: 8, completed: 8, failed: 0, dropped: 0, unfinished: 0, not_started: 0 });
        const records = readRequestsJsonl(result.files.requests);
        assert.ok(records.every((r) => r.retries === 0 && r.status === 'ok'));
        const resends = records.reduce((sum, r) => sum + r.stale_connection_resends, 0);
        assert.equal(resends, server.dropped, 'every dropped request was resent, and counted once');
        if (finDelayMs === 200) assert.equal(resends, 1, 'the race is certain once, then connections are not reused');
        const doc = JSON.parse(readFileSync(result.files.results, 'utf8')) as { client_health: { stale_connection_resends: number } };
        assert.equal(doc.client_health.stale_connection_resends, resends);
        assert.equal(result.exitCode, 0);
      } finally {
        await server.close();
      }
    });
  }
  test('a large body sent as its chunks is resent byte-identical after a stale connection (issue #14)', { timeout: 20_000 }, async () => {
    const server = await startCloseAfterStreamServer({ finDelayMs: 200 });
    const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 10_000 });
    try {
      // A 3 MB message with escapes and non-ASCII, prepared in 256 kB slices as a run does: a body of many chunks.
      // Prepared before the first request, so the second is sent at once after the first ends, well inside the
      // server's 200 ms before it closes (preparing it in between took longer than that on a loaded machine).
      const big = { role: 'user' as const, content: 'line "one"\n\tzwei drei \u00e9\u{1F600} '.repeat(110_000) };
      await prepareMessageBytes(big);
      const request = chatRequest({ messages: [{ role: 'system', content: 'be brief' }, big, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'and?' }] });
      const chunks = encodeChatBody(request);
      assert.ok(Array.isArray(chunks) && chunks.length > 10, 'sent as chunks');
      const expected = Buffer.concat(chunks);
      assert.ok(expected.length > CHUNKED_BODY_BYTES);
      assert.equal((await client.send(chatRequest())).error, undefined);
      const second = await client.send(request);
      assert.equal(second.error, undefined, second.error?.message);
      assert.equal(second.staleConnectionResends, 1, 'written onto the closing connection, then resent');
      assert.equal(server.dropped, 1);
      const received = server.requests.filter((r) => r.method === 'POST');
      assert.equal(received.length, 3, 'the first, the dropped one, the resend');
      for (const r of received.slice(1)) {
        assert.equal(r.headers['content-length'], String(expected.length));
        assert.ok(Buffer.from(r.body, 'utf8').equals(expected), 'the body arrives byte for byte');
      }
      assert.deepEqual(JSON.parse(received[2]!.body), buildChatBody(request), 'the same JSON as the whole body would be');
    } finally {
      await server.close();
      await client.close();
    }
  });
});
