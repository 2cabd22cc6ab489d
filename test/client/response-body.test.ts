// The response body as undici's dispatch() hands it over (client/exchange.ts): chunks go straight from the HTTP parser
// to the readers, so what a stream once did (buffering, pausing, draining, destroying) is the client's own now:
// backpressure through a slow decoder, the rest of a body after [DONE], error bodies cut at their excerpt, timeouts in
// a compressed stream, and an abort while the request waits for a connection.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ChatClient } from '../../src/client/chat-client.js';
import { decodingSink } from '../../src/client/content-encoding.js';
import { Exchange, type BodyControl, type BodySink } from '../../src/client/exchange.js';
import { chatRequest, withScriptedClient } from '../helpers/client-test-utils.js';
import { chunkJson, sseEvent, usageChunkJson } from '../helpers/scripted-server.js';

const TEST_TIMEOUT = { timeout: 20_000 };
const token = (content: string): string => sseEvent(chunkJson({ content }));
const ending = (completionTokens: number): string => `${sseEvent(usageChunkJson(1, completionTokens))}data: [DONE]\n\n`;

/** Random-ish text that compresses poorly, so a few MB of it stay a few MB on the wire. */
function noisyWords(count: number, seed: number): string[] {
  let x = seed;
  return Array.from({ length: count }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return ` w${x.toString(36)}`;
  });
}

describe('response bodies read from the handler', () => {
  test('a decoder that falls behind pauses the response, and resumes it: every byte decoded, in order, each piece stamped with its read', TEST_TIMEOUT, async () => {
    const text = noisyWords(200_000, 7).join('');
    const compressed = gzipSync(Buffer.from(text));
    const calls: string[] = [];
    let paused = false;
    let wake: (() => void) | undefined;
    const control: BodyControl = {
      stop: () => calls.push('stop'),
      discardRest: () => calls.push('discardRest'),
      pause: () => {
        calls.push('pause');
        paused = true;
      },
      resume: () => {
        if (!paused) return;
        calls.push('resume');
        paused = false;
        wake?.();
      },
    };
    const out: Buffer[] = [];
    const stamps: number[] = [];
    let ended = false;
    const done = new Promise<void>((resolve, reject) => {
      const sink = decodingSink(['gzip'], 'gzip', control, (): BodySink => ({
        data: (chunk, atMs) => {
          out.push(chunk);
          stamps.push(atMs);
        },
        end: () => {
          ended = true;
          resolve();
        },
        error: reject,
      }));
      // Feed it as undici does: 16 KiB reads, none while paused, each read's time its index.
      void (async () => {
        for (let at = 0, read = 1; at < compressed.length; at += 16_384, read++) {
          while (paused) await new Promise<void>((resolve) => (wake = resolve));
          sink.data(compressed.subarray(at, at + 16_384), read);
        }
        sink.end(0);
      })();
    });
    await done;
    assert.ok(ended);
    assert.equal(Buffer.concat(out).toString('utf8'), text);
    assert.ok(calls.includes('pause'), 'the decoder asked for a pause');
    assert.equal(calls.filter((c) => c === 'pause').length, calls.filter((c) => c === 'resume').length, 'every pause was resumed');
    assert.ok(!calls.includes('stop') && !calls.includes('discardRest'));
    // Stamps are reads' times: whole numbers from 1 up, never going back.
    assert.ok(stamps.every((s, i) => Number.isInteger(s) && s >= 1 && (i === 0 || s >= stamps[i - 1]!)));
  });

  test('a large gzip SSE stream over loopback arrives whole through pause and resume', TEST_TIMEOUT, async () => {
    const words = noisyWords(40_000, 11);
    const sse = Buffer.from(words.map(token).join('') + ending(words.length));
    const compressed = gzipSync(sse);
    const actions = [];
    for (let at = 0; at < compressed.length; at += 256 * 1024) actions.push({ write: compressed.subarray(at, at + 256 * 1024) });
    await withScriptedClient({ headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, actions: [...actions, { end: true }] }, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(result.numTokenChunks, words.length);
      assert.equal(result.content, words.join(''));
      assert.deepEqual(result.usage, { promptTokens: 1, completionTokens: words.length });
    });
  });

  test('a gzip stream that stalls mid-stream ends in timeout_idle, keeping what was decoded', TEST_TIMEOUT, async () => {
    // A sync flush after each event, as a server compressing a stream does, so the first events decode on their own.
    const { createGzip, constants } = await import('node:zlib');
    const gzip = createGzip();
    const pieces: Buffer[] = [];
    gzip.on('data', (piece: Buffer) => pieces.push(piece));
    for (const word of ['Hel', 'lo']) {
      gzip.write(token(word));
      await new Promise<void>((resolve) => gzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    }
    const head = Buffer.concat(pieces);
    await withScriptedClient(
      { headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, actions: [{ write: head }] },
      { idleTimeoutMs: 300 },
      async (client) => {
        const result = await client.send(chatRequest());
        assert.equal(result.error?.kind, 'timeout_idle');
        assert.equal(result.content, 'Hello');
        assert.equal(result.numTokenChunks, 2);
      },
    );
    gzip.destroy();
  });

  test('bytes after [DONE] are read and dropped, and the connection is reused', TEST_TIMEOUT, async () => {
    const body = token('a') + ending(1);
    await withScriptedClient(
      { actions: [{ write: body }, { write: ': trailing comment\n\ndata: {"late": true}\n\n', delayMs: 20 }, { end: true, delayMs: 20 }] },
      { connections: 1 },
      async (client, server) => {
        const first = await client.send(chatRequest());
        assert.equal(first.error, undefined, first.error?.message);
        assert.equal(first.content, 'a');
        assert.ok(first.headersAtMs! <= first.firstTokenAtMs!);
        // The rest is drained while the connection stays open; once the body ends, the connection is free again.
        assert.equal(client.drainingResponses, 1);
        while (client.drainingResponses > 0) await new Promise((resolve) => setTimeout(resolve, 5));
        const second = await client.send(chatRequest());
        assert.equal(second.error, undefined, second.error?.message);
        assert.equal(server.requests.length, 2);
        assert.equal(server.requests[1]!.remotePort, server.requests[0]!.remotePort, 'the same keep-alive connection');
      },
    );
  });

  test('a body that goes on after [DONE] is cut after the grace period, and the next request takes a new connection', TEST_TIMEOUT, async () => {
    let answered = 0;
    const closed: Promise<unknown>[] = [];
    const ports: number[] = [];
    const responses = new Set<ServerResponse>();
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        answered += 1;
        ports.push(req.socket.remotePort!);
        responses.add(res);
        closed.push(once(res, 'close'));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // The first response never ends after its [DONE]; the second ends as it should.
        res.write(token('x') + ending(1));
        if (answered > 1) res.end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = new ChatClient({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`, connections: 1, requestTimeoutMs: 10_000 });
    try {
      const first = await client.send(chatRequest());
      assert.equal(first.error, undefined, first.error?.message);
      // The client closes the endless body itself (the server never does).
      await closed[0];
      const second = await client.send(chatRequest());
      assert.equal(second.error, undefined, second.error?.message);
      assert.notEqual(ports[1], ports[0]);
    } finally {
      for (const res of responses) res.destroy();
      await client.close();
      server.closeAllConnections();
      server.close();
    }
  });

  test('an error body past 4 KiB is cut at its excerpt, and the client goes on', TEST_TIMEOUT, async () => {
    const huge = JSON.stringify({ error: { message: `too long ${'x'.repeat(100_000)}` } });
    await withScriptedClient(
      (_request, index) =>
        index === 0
          ? { status: 500, headers: { 'content-type': 'application/json' }, actions: [{ write: huge }] } // never ended
          : { actions: [{ write: token('ok') + ending(1) }, { end: true }] },
      { connections: 1 },
      async (client) => {
        const failed = await client.send(chatRequest());
        assert.equal(failed.error?.kind, 'http_status');
        assert.equal(failed.error?.status, 500);
        assert.equal(failed.error?.bodyExcerpt?.length, 200);
        assert.match(failed.error!.message, /^HTTP 500: /);
        const next = await client.send(chatRequest());
        assert.equal(next.error, undefined, next.error?.message);
        assert.equal(next.content, 'ok');
      },
    );
  });

  test('a request aborted while it waits for a busy connection ends then, without being sent', TEST_TIMEOUT, async () => {
    await withScriptedClient({ noHeaders: true }, { connections: 1, requestTimeoutMs: 3_000 }, async (client, server) => {
      const order: string[] = [];
      const holding = client.send(chatRequest()).then((result) => {
        order.push('holding');
        return result;
      });
      // Wait until the first request holds the one connection.
      while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const controller = new AbortController();
      const queued = client.send(chatRequest(), controller.signal).then((result) => {
        order.push('queued');
        return result;
      });
      setImmediate(() => controller.abort('deadline'));
      const early = await queued;
      assert.equal(early.error?.kind, 'aborted');
      assert.match(early.error!.message, /deadline/);
      const late = await holding;
      assert.equal(late.error?.kind, 'timeout_total');
      assert.deepEqual(order, ['queued', 'holding'], 'the queued request ended before the one holding the connection');
      assert.equal(server.requests.length, 1, 'the aborted request was never sent');
    });
  });

  test('GET /v1/models still reads its body as a stream: a gzip list is decoded, a gzip error body excerpted', TEST_TIMEOUT, async () => {
    const list = gzipSync(Buffer.from(JSON.stringify({ object: 'list', data: [{ id: 'zipped', max_model_len: 4096 }] })));
    const denied = gzipSync(Buffer.from(JSON.stringify({ error: { message: 'no such route' } })));
    await withScriptedClient(
      (_request, index) => ({
        status: index === 0 ? 200 : 404,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        actions: [{ write: index === 0 ? list : denied }, { end: true }],
      }),
      {},
      async (client) => {
        assert.deepEqual(await client.listModels(), [{ id: 'zipped', maxModelLen: 4096 }]);
        await assert.rejects(client.listModels(), /answered GET \/v1\/models with HTTP 404: no such route$/);
      },
    );
  });

  test('a reader that throws ends the exchange through its failure, never a wait that does not end', () => {
    const aborted: unknown[] = [];
    const controller = { aborted: false, paused: false, reason: null, abort: (reason: Error) => aborted.push(reason), pause() {}, resume() {} };
    const failures: Error[] = [];
    const boom = new Error('reader bug');
    const exchange = new Exchange(
      () => ({
        data: () => {
          throw boom;
        },
        end() {},
        error() {},
      }),
      (error) => failures.push(error),
    );
    exchange.onRequestStart(controller);
    exchange.onResponseStart(controller, 200, {});
    exchange.onResponseData(controller, Buffer.from('data: x\n\n'));
    assert.deepEqual(failures, [boom]);
    assert.deepEqual(aborted, [boom], 'the response is aborted');
    // Whatever undici reports after that is not heard twice.
    exchange.onResponseError(controller, new Error('aborted'));
    exchange.onResponseEnd();
    assert.equal(failures.length, 1);
  });
});
