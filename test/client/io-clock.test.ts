import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChatClient } from '../../src/client/chat-client.js';
import { ioNow } from '../../src/client/io-clock.js';
import { chunkJson, sseEvent } from '../helpers/scripted-server.js';
import { chatRequest } from '../helpers/client-test-utils.js';

/** Holds the CPU for `ms`: the client busy with one chunk (a collection, a lookup, descheduled) before the next. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('the I/O clock (client/io-clock.ts)', () => {
  test('one reading per turn of the loop: the same within it, a later one after it', { timeout: 5_000 }, async () => {
    const first = ioNow();
    busy(3);
    assert.equal(ioNow(), first, 'a second reading in the same turn');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(ioNow() >= first + 3, 'the next turn reads the clock again');
  });

  // What the expected-cache model reads a batch from (docs/METRICS.md, "Its own blocks become visible"): a server's
  // engine step sends its requests' first tokens together; the client must read them together even when its work on
  // the first (here 12 ms of it) comes between them. Read per chunk, the second came 12 ms after the first.
  test('two first tokens a server wrote together get one time, whatever the client did between them', { timeout: 10_000 }, async () => {
    const held: ServerResponse[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        held.push(res);
        if (held.length < 2) return;
        // One engine step: both first tokens in one turn of the server's loop, then each stream ends.
        setTimeout(() => {
          for (const r of held) r.write(sseEvent(chunkJson({ content: 'a' })));
          setTimeout(() => {
            for (const r of held) r.end(sseEvent(chunkJson({}, 'stop')) + sseEvent('[DONE]'));
          }, 20);
        }, 20);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new ChatClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: 2, requestTimeoutMs: 5_000 });
    try {
      const told: number[] = [];
      const onFirstToken = (atMs: number): void => {
        told.push(atMs);
        if (told.length === 1) busy(12);
      };
      const results = await Promise.all([client.send(chatRequest({ onFirstToken })), client.send(chatRequest({ onFirstToken }))]);
      for (const r of results) assert.equal(r.error, undefined);
      const [a, b] = results.map((r) => r.firstTokenAtMs!);
      assert.equal(a, b, `first tokens at ${a} and ${b} ms`);
      assert.deepEqual(told, [a, a], 'onFirstToken is told the record\'s first-token time');
      for (const r of results) assert.ok(r.firstTokenAtMs! >= r.headersAtMs! && r.doneAtMs > r.firstTokenAtMs!, 'head, first token and end in order');
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
