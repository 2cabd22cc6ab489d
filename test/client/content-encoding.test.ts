// Compressed responses (issue #16): chatload asks for identity; a server that compresses anyway is decoded (gzip,
// deflate, br), or fails with a message naming the coding. Never `truncated_stream` for a complete compressed stream.
import assert from 'node:assert/strict';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { chatRequest, withScriptedClient } from '../helpers/client-test-utils.js';
import { chunkJson, sseEvent, usageChunkJson, type ScriptAction, type ScriptedResponse } from '../helpers/scripted-server.js';

const TEST_TIMEOUT = { timeout: 15_000 };
const SSE = [sseEvent(chunkJson({ content: 'Hel' })), sseEvent(chunkJson({ content: 'lo' }, 'stop')), sseEvent(usageChunkJson(3, 2)), 'data: [DONE]\n\n'].join('');

/** The bytes in `parts` pieces, each its own write a few ms apart (so the decoder sees several reads). */
function pieces(bytes: Buffer, parts: number): ScriptAction[] {
  const size = Math.ceil(bytes.length / parts);
  const actions: ScriptAction[] = [];
  for (let at = 0; at < bytes.length; at += size) actions.push({ write: bytes.subarray(at, at + size), delayMs: 5 });
  return actions;
}

function encoded(encoding: string, bytes: Buffer, contentType = 'text/event-stream', end = true): ScriptedResponse {
  return { headers: { 'content-type': contentType, 'content-encoding': encoding }, actions: [...pieces(bytes, 4), ...(end ? [{ end: true as const }] : [])] };
}

describe('compressed responses', () => {
  test('every request asks for identity', TEST_TIMEOUT, async () => {
    await withScriptedClient({ actions: [{ write: SSE }, { end: true }] }, {}, async (client, server) => {
      assert.equal((await client.send(chatRequest())).error, undefined);
      assert.equal(server.requests[0]!.headers['accept-encoding'], 'identity');
    });
  });

  for (const [encoding, compress] of [['gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync]] as const) {
    test(`a ${encoding} SSE stream sent anyway is decoded: the same answer, usage and chunk count`, TEST_TIMEOUT, async () => {
      await withScriptedClient(encoded(encoding, compress(Buffer.from(SSE))), {}, async (client) => {
        const result = await client.send(chatRequest());
        assert.equal(result.error, undefined, result.error?.message);
        assert.equal(result.content, 'Hello');
        assert.equal(result.numTokenChunks, 2);
        assert.deepEqual(result.usage, { promptTokens: 3, completionTokens: 2 });
        assert.ok(result.firstTokenAtMs! >= result.sentAtMs && result.doneAtMs >= result.firstTokenAtMs!);
      });
    });
  }

  test('a gzip JSON body (no streaming) is decoded too', TEST_TIMEOUT, async () => {
    const body = JSON.stringify({ choices: [{ message: { content: 'whole' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } });
    await withScriptedClient(encoded('gzip', gzipSync(Buffer.from(body)), 'application/json'), {}, async (client) => {
      const result = await client.send(chatRequest({ stream: false }));
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(result.content, 'whole');
    });
  });

  test('a gzip error body gives a readable excerpt', TEST_TIMEOUT, async () => {
    const response: ScriptedResponse = {
      status: 400,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      actions: [{ write: gzipSync(Buffer.from(JSON.stringify({ error: { message: 'bad max_tokens' } }))) }, { end: true }],
    };
    await withScriptedClient(response, {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'http_status');
      assert.equal(result.error?.message, 'HTTP 400: bad max_tokens');
    });
  });

  test('a coding chatload cannot decode fails as other, naming it', TEST_TIMEOUT, async () => {
    await withScriptedClient(encoded('zstd', Buffer.from('(\xb5/\xfd garbage')), {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'other');
      assert.match(result.error!.message, /Content-Encoding: zstd, which chatload cannot decode/);
    });
  });

  test('gzip that is not gzip is malformed_stream, naming gzip', TEST_TIMEOUT, async () => {
    await withScriptedClient(encoded('gzip', Buffer.from(SSE)), {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'malformed_stream');
      assert.match(result.error!.message, /^gzip-encoded body could not be decoded: /);
    });
  });

  test('gzip cut short is truncated_stream, naming gzip, the decoded part kept', TEST_TIMEOUT, async () => {
    const whole = gzipSync(Buffer.from(SSE));
    await withScriptedClient(encoded('gzip', whole.subarray(0, whole.length - 12)), {}, async (client) => {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'truncated_stream');
      assert.match(result.error!.message, /gzip-encoded body could not be decoded: unexpected end of file/);
    });
  });

  test('a reset inside a gzip stream keeps its own kind', TEST_TIMEOUT, async () => {
    const whole = gzipSync(Buffer.from(SSE));
    const response: ScriptedResponse = { headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, actions: [{ write: whole.subarray(0, 10) }, { destroy: 'reset', delayMs: 10 }] };
    await withScriptedClient(response, {}, async (client) => {
      assert.equal((await client.send(chatRequest())).error?.kind, 'connect_reset');
    });
  });
});
