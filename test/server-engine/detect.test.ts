import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatClient } from '../../src/client/chat-client.js';
import { collectClues, pickEngine, probeEngine } from '../../src/server-engine/detect.js';
import { metricNamesFor } from '../../src/server-engine/profiles.js';
import { startSimulator } from '../../src/sim/index.js';
import { startLlamaCppServer, startProxyServer, startSglangServer, startTgiServer, startVllmServer } from '../helpers/engine-servers.js';
import type { EngineServer } from '../helpers/engine-server-core.js';
import { startRawServer } from '../helpers/raw-server.js';
import { closedPort } from '../helpers/scripted-server.js';

async function detected(server: EngineServer | { url: string; close(): Promise<void> }) {
  try {
    return (await probeEngine({ rootUrl: server.url })).engine;
  } finally {
    await server.close();
  }
}

describe('engine detection over loopback', () => {
  test('vLLM: owned_by "vllm", /version, vllm:* metric names', { timeout: 10_000 }, async () => {
    const server = await startVllmServer();
    const engine = await detected(server);
    assert.equal(engine.name, 'vllm');
    assert.equal(engine.version, '0.11.0');
    assert.deepEqual(engine.detected_by, ['GET /v1/models: owned_by "vllm"', 'GET /version: {"version": …}', 'GET /metrics: vllm:* names']);
    assert.ok(server.requests.every((r) => r.method === 'GET'), 'detection sends GETs only');
  });

  test("a /v1/models answer already read (ChatClient.modelsAnswer) is used as it is, not asked for again", { timeout: 10_000 }, async () => {
    const server = await startVllmServer();
    try {
      const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 5_000 });
      try {
        const before = client.modelsAnswer;
        assert.equal(before, undefined);
        await client.waitReady(5_000);
        const models = client.modelsAnswer;
        assert.equal(models?.status, 200);
        const { engine } = await probeEngine({ rootUrl: server.url, models });
        assert.equal(engine.name, 'vllm');
        assert.ok(engine.detected_by.includes('GET /v1/models: owned_by "vllm"'), engine.detected_by.join('; '));
        assert.equal(server.requests.filter((r) => r.url === '/v1/models').length, 1, 'the readiness check only');
        assert.ok(server.requests.some((r) => r.url === '/version'), 'the other probes are still sent');
      } finally {
        await client.close();
      }
    } finally {
      await server.close();
    }
  });

  test('SGLang: owned_by "sglang", sglang:* names, the version from /server_info', { timeout: 10_000 }, async () => {
    const engine = await detected(await startSglangServer());
    assert.equal(engine.name, 'sglang');
    assert.equal(engine.version, '0.5.2');
    assert.deepEqual(engine.detected_by, ['GET /v1/models: owned_by "sglang"', 'GET /metrics: sglang:* names']);
  });

  test('llama.cpp: owned_by "llamacpp", the server header, llamacpp:* names and /props build_info', { timeout: 10_000 }, async () => {
    const engine = await detected(await startLlamaCppServer());
    assert.equal(engine.name, 'llamacpp');
    assert.equal(engine.version, 'b6500-1a2b3c4d');
    assert.ok(engine.detected_by.includes('server header "llama.cpp"'));
    assert.ok(engine.detected_by.includes('GET /metrics: llamacpp:* names'));
    // Without --metrics the rest still names it.
    const bare = await detected(await startLlamaCppServer({ metrics: false }));
    assert.equal(bare.name, 'llamacpp');
  });

  test('TGI: owned_by is the model id, /info says router "text-generation-router", tgi_* names', { timeout: 10_000 }, async () => {
    const engine = await detected(await startTgiServer({ model: 'meta-llama/Llama-3.1-8B-Instruct' }));
    assert.equal(engine.name, 'tgi');
    assert.equal(engine.version, '3.3.6');
    assert.deepEqual(engine.detected_by, [
      'GET /v1/models: owned_by equals the model id',
      'GET /metrics: tgi_* names',
      'GET /info: router "text-generation-router"',
    ]);
  });

  test("chatload's simulator is itself, not vLLM, although it serves vLLM's metric names", { timeout: 10_000 }, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny' });
    const engine = await detected(sim);
    assert.equal(engine.name, 'chatload-sim');
    assert.match(engine.version!, /^\d+\.\d+\.\d+/);
    assert.deepEqual(engine.detected_by, ['GET /v1/models: owned_by "chatload"', 'GET /metrics: chatload_sim_* names']);
  });

  test('unknown: a proxy with its own metrics, a refused port, a server that never answers (bounded)', { timeout: 15_000 }, async () => {
    assert.deepEqual(await detected(await startProxyServer()), { name: 'unknown', version: null, detected_by: [] });
    const port = await closedPort();
    assert.equal((await probeEngine({ rootUrl: `http://127.0.0.1:${port}` })).engine.name, 'unknown');
    const silent = await startRawServer(() => {});
    // Bounded by its timeout: a probe that ignored it would wait on the silent server for ever, and lose this race
    // against a bound far above its few 300 ms probes (no timing is asserted: a loaded machine only slows both).
    let bound: NodeJS.Timeout | undefined;
    const unbounded = new Promise<'unbounded'>((resolve) => (bound = setTimeout(() => resolve('unbounded'), 10_000)));
    const probed = await Promise.race([probeEngine({ rootUrl: silent.url, timeoutMs: 300 }), unbounded]);
    clearTimeout(bound);
    assert.notEqual(probed, 'unbounded', 'every probe is bounded by its timeout');
    assert.equal(probed === 'unbounded' ? undefined : probed.engine.name, 'unknown');
    await silent.close();
  });
});

describe('engine clues', () => {
  test('the strongest evidence wins; no clue is unknown', () => {
    assert.equal(pickEngine([]), 'unknown');
    assert.equal(
      pickEngine([
        { engine: 'vllm', weight: 2, evidence: 'metrics' },
        { engine: 'vllm', weight: 1, evidence: 'version' },
        { engine: 'chatload-sim', weight: 3, evidence: 'owned_by' },
        { engine: 'chatload-sim', weight: 2, evidence: 'metrics' },
      ]),
      'chatload-sim',
    );
  });

  test('answers that are not what they look like give no clue', () => {
    const page = (status: number, text: string) => ({ status, headers: {}, text });
    assert.deepEqual(
      collectClues({
        models: page(200, '{"data": [{"id": "m", "owned_by": "openai"}]}'),
        version: page(200, '{"object": "list"}'),
        metrics: page(200, '{"object": "list", "data": []}'),
        info: page(404, '{"router": "text-generation-router"}'),
        props: page(200, 'not json'),
      }),
      [],
    );
  });

  test("metric names: the detected engine's first, then every other engine's", () => {
    const llamacpp = metricNamesFor('llamacpp');
    assert.deepEqual(llamacpp.prefix_cache_queries[0], { sum: ['llamacpp:prompt_tokens_total', 'llamacpp:prompt_tokens_cached_total'] });
    assert.ok(llamacpp.prefix_cache_queries.includes('vllm:prefix_cache_queries_total'));
    assert.equal(metricNamesFor('unknown').prefix_cache_queries[0], 'vllm:prefix_cache_queries_total');
    assert.equal(metricNamesFor('sglang').requests_waiting[0], 'sglang:num_queue_reqs');
  });
});
