// Property tests (fast-check) for what reads outside input:
// - the conversation loaders (JSON list, JSONL): any text gives conversations or a one-line DatasetError/ConfigError,
//   never another exception; and near-valid documents (a valid dataset with one field mutated) likewise.
// - the client's whole read path (socket → undici → SseReader → ResponseCollector) on arbitrary response bytes:
//   send() never rejects and every failure has a kind of the taxonomy. test/client/sse-reader.test.ts already fuzzes
//   the SseReader alone (never throws, split-invariant, agrees with eventsource-parser); this goes one layer out.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ChatClient } from '../../src/client/chat-client.js';
import { loadConversations } from '../../src/conversation/load.js';
import { ERROR_KINDS } from '../../src/metrics/error-kinds.js';
import { ConfigError, DatasetError } from '../../src/errors/index.js';
import { chatRequest } from '../helpers/client-test-utils.js';
import { startRawServer } from '../helpers/raw-server.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('fuzz');
let fileCounter = 0;

/** Loads `content` written as a file with `extension`; returns 'ok' or the one-line error, and fails on anything else. */
async function loadOrOneLineError(content: string | Uint8Array, extension: '.json' | '.jsonl'): Promise<string> {
  const path = join(dir, `f${fileCounter++}${extension}`);
  writeFileSync(path, content);
  try {
    const conversations = await loadConversations(path);
    assert.ok(Array.isArray(conversations) && conversations.length > 0, 'a successful load has conversations');
    for (const c of conversations) assert.equal(typeof c.id, 'string');
    return 'ok';
  } catch (error) {
    assert.ok(error instanceof DatasetError || error instanceof ConfigError, `unexpected ${(error as Error)?.stack ?? String(error)}`);
    assert.ok(!/[\r\n]/.test(error.message), `one line: ${JSON.stringify(error.message)}`);
    assert.ok(error.message.startsWith(path), `names the file: ${error.message}`);
    assert.equal(error.exitCode, 2);
    return error.message;
  }
}

const message = fc.record({ role: fc.constantFrom('user', 'assistant', 'system', 'tool', ''), content: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) });
const conversation = fc.record(
  { id: fc.oneof(fc.string(), fc.integer()), messages: fc.oneof(fc.array(message, { maxLength: 5 }), fc.jsonValue()) },
  { requiredKeys: [] },
);
/** Datasets near the valid shape, with anything JSON can hold mixed in (`__proto__` keys included). */
const nearDataset = fc.array(fc.oneof({ weight: 4, arbitrary: conversation }, { weight: 1, arbitrary: fc.jsonValue() }), { maxLength: 4 });

describe('conversation loaders never throw anything but a one-line input error', () => {
  test('arbitrary text as .json and .jsonl', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('.json' as const, '.jsonl' as const), async (text, ext) => {
        await loadOrOneLineError(text, ext);
      }),
      { numRuns: 300 },
    );
  });

  test('arbitrary bytes (invalid UTF-8 too)', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), fc.constantFrom('.json' as const, '.jsonl' as const), async (bytes, ext) => {
        await loadOrOneLineError(bytes, ext);
      }),
      { numRuns: 200 },
    );
  });

  test('near-valid datasets as a JSON list and as JSONL', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(nearDataset, async (items) => {
        await loadOrOneLineError(JSON.stringify(items), '.json');
        await loadOrOneLineError(items.map((item) => JSON.stringify(item) ?? 'null').join('\n'), '.jsonl');
      }),
      { numRuns: 300 },
    );
  });

  test('valid datasets load, and what loads is data: content is never evaluated and nothing is polluted', { timeout: 30_000 }, async () => {
    const nasty = ['${process.exit(3)}', '`${1+1}`', '__proto__', '{{7*7}}', "'); process.exit(4); //", '<script>alert(1)</script>'];
    const items = [
      { id: '__proto__', messages: nasty.flatMap((text) => [{ role: 'user', content: text }, { role: 'assistant', content: text }]) },
      JSON.parse('{"id": "constructor", "__proto__": {"polluted": true}, "messages": [{"role": "user", "content": "hi", "__proto__": {"polluted": true}}]}'),
    ];
    for (const ext of ['.json', '.jsonl'] as const) {
      const text = ext === '.json' ? JSON.stringify(items) : items.map((item) => JSON.stringify(item)).join('\n');
      const path = join(dir, `nasty${ext}`);
      writeFileSync(path, text);
      const loaded = await loadConversations(path);
      assert.deepEqual(loaded.map((c) => c.id), ['__proto__', 'constructor']);
      assert.deepEqual(loaded[0]!.messages.map((m) => m.content), nasty.flatMap((t) => [t, t]));
      assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
      assert.equal((loaded[1]!.messages[0] as unknown as Record<string, unknown>).polluted, undefined);
    }
  });
});

describe('the client read path on arbitrary response bytes', () => {
  test('send() never rejects; a failure has a known kind and a one-line message', { timeout: 60_000 }, async () => {
    const head = fc.constantFrom(
      'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\n',
      '',
    );
    const sseish = fc.array(
      fc.oneof(
        fc.constantFrom('data: [DONE]\n\n', 'data: {"choices":[{"delta":{"content":"x"}}]}\n\n', 'data: {"error":{"message":"e"}}\n\n', ': ping\n', '\r\n', 'data:', '\n'),
        fc.string({ unit: 'binary', maxLength: 40 }),
      ),
      { maxLength: 12 },
    );
    let body: Buffer = Buffer.alloc(0);
    const server = await startRawServer((_request, socket) => socket.end(body));
    const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 3_000 });
    try {
      await fc.assert(
        fc.asyncProperty(head, sseish, fc.uint8Array({ maxLength: 64 }), async (h, parts, tail) => {
          body = Buffer.concat([Buffer.from(h + parts.join(''), 'utf8'), Buffer.from(tail)]);
          const result = await client.send(chatRequest());
          if (result.error !== undefined) {
            assert.ok((ERROR_KINDS as readonly string[]).includes(result.error.kind), result.error.kind);
            assert.ok(!/[\r\n]/.test(result.error.message), result.error.message);
          } else {
            assert.ok(result.doneAtMs >= result.sentAtMs);
          }
        }),
        { numRuns: 150 },
      );
    } finally {
      await server.close();
      await client.close();
    }
  });
});
