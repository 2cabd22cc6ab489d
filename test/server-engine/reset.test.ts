import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resetPrefixCache, resetWarning } from '../../src/server-engine/reset-cache.js';
import type { EngineName } from '../../src/server-engine/profiles.js';
import { startLlamaCppServer, startProxyServer, startSglangServer, startTgiServer, startVllmServer } from '../helpers/engine-servers.js';
import type { EngineServer } from '../helpers/engine-server-core.js';

/** Resets `server` as `engine`, then closes it; returns the result and the requests the server saw. */
async function reset(engine: EngineName, server: EngineServer) {
  try {
    const result = await resetPrefixCache(engine, { rootUrl: server.url, timeoutMs: 2_000 });
    return { result, sent: server.requests.map((r) => `${r.method} ${r.url}`) };
  } finally {
    await server.close();
  }
}

describe('--reset-prefix-cache per engine', () => {
  test('vLLM: POST /reset_prefix_cache; without VLLM_SERVER_DEV_MODE it is a 404 and the reason says so', { timeout: 10_000 }, async () => {
    const ok = await reset('vllm', await startVllmServer());
    assert.deepEqual(ok, { result: { ok: true, detail: 'POST /reset_prefix_cache: HTTP 200' }, sent: ['POST /reset_prefix_cache'] });
    const refused = await reset('vllm', await startVllmServer({ devMode: false }));
    assert.equal(refused.result.ok, false);
    assert.match(refused.result.detail, /^POST \/reset_prefix_cache answered HTTP 404: .*; vLLM serves it only with VLLM_SERVER_DEV_MODE=1$/);
    assert.match(resetWarning('vllm', refused.result), /^--reset-prefix-cache: could not empty the prefix cache of vLLM \(POST \/reset_prefix_cache answered HTTP 404/);
  });

  test('SGLang: POST /flush_cache; refused (400) while requests run', { timeout: 10_000 }, async () => {
    const ok = await reset('sglang', await startSglangServer());
    assert.deepEqual(ok, { result: { ok: true, detail: 'POST /flush_cache: HTTP 200' }, sent: ['POST /flush_cache'] });
    const busy = await reset('sglang', await startSglangServer({ busy: true }));
    assert.equal(busy.result.ok, false);
    assert.match(busy.result.detail, /HTTP 400: Flush cache failed.*; SGLang refuses to flush while requests are running or waiting$/);
  });

  test('llama.cpp: GET /slots, then erase each slot', { timeout: 10_000 }, async () => {
    const server = await startLlamaCppServer({ parallel: 3 });
    const { result, sent } = await reset('llamacpp', server);
    assert.deepEqual(result, { ok: true, detail: 'erased 3 slots (360 cached tokens)' });
    assert.deepEqual(sent, ['GET /slots', 'POST /slots/0?action=erase', 'POST /slots/1?action=erase', 'POST /slots/2?action=erase']);
    assert.deepEqual(server.erased, [0, 1, 2]);
  });

  test('llama.cpp cannot: /slots off (--no-slots) or slot actions off (no --slot-save-path), each says why', { timeout: 10_000 }, async () => {
    const noSlots = await reset('llamacpp', await startLlamaCppServer({ slots: false }));
    assert.equal(noSlots.result.ok, false);
    assert.match(noSlots.result.detail, /^GET \/slots answered HTTP 501: .*This server does not support slots endpoint.*; llama-server cannot list its slots/);
    assert.deepEqual(noSlots.sent, ['GET /slots'], 'nothing is erased when the slots cannot be listed');
    const noSavePath = await reset('llamacpp', await startLlamaCppServer({ slotSavePath: false }));
    assert.equal(noSavePath.result.ok, false);
    assert.match(noSavePath.result.detail, /POST \/slots\/0\?action=erase answered HTTP 501: .*; llama-server allows slot actions only with --slot-save-path$/);
    assert.match(resetWarning('llamacpp', noSavePath.result), /prefix cache of llama\.cpp \(/);
  });

  test('TGI has no reset endpoint: nothing is sent, and the reason names TGI', { timeout: 10_000 }, async () => {
    const tgi = await reset('tgi', await startTgiServer());
    assert.deepEqual(tgi, { result: { ok: false, detail: 'TGI has no endpoint that empties its prefix cache' }, sent: [] });
  });

  test("unknown engine: vLLM's endpoint, then SGLang's; the warning says the engine was not identified", { timeout: 10_000 }, async () => {
    const fallback = await reset('unknown', await startProxyServer({ flushCache: true }));
    assert.equal(fallback.result.ok, true);
    assert.match(fallback.result.detail, /^POST \/flush_cache: HTTP 200 \(after POST \/reset_prefix_cache answered HTTP 404/);
    assert.deepEqual(fallback.sent, ['POST /reset_prefix_cache', 'POST /flush_cache']);
    const none = await reset('unknown', await startProxyServer());
    assert.equal(none.result.ok, false);
    assert.match(resetWarning('unknown', none.result), /of the server \(engine not identified\) \(POST \/reset_prefix_cache answered HTTP 404.*; POST \/flush_cache answered HTTP 404/);
  });
});
