// The readiness wait ends at once on what no wait can cure (issue #34, item 2: each waited the whole 60 s of
// --ready-timeout-sec): an unknown host (exit 2), HTTP 401, 403 or 404 on GET /v1/models and a TLS failure (exit 1).
// What a starting server does (a refused connection, a 503 while the model loads) is still waited on, and each retry
// says its cause. The servers are real loopback ones; the counts of GETs they saw show the wait ended at once (no
// timing is asserted).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatClient } from '../../src/client/chat-client.js';
import { ConfigError, ExitCode, ServerRefusedError, ServerUnreachableError } from '../../src/errors/index.js';
import { failingLookup, withScriptedClient } from '../helpers/client-test-utils.js';
import { jsonStatus, MODELS_RESPONSE, startScriptedServer } from '../helpers/scripted-server.js';

const TEST_TIMEOUT = { timeout: 20_000 };
/** Longer than any of these tests may take: a wait that runs to it failed to end at once. */
const LONG_WAIT_MS = 60_000;

const gets = (server: { requests: ReadonlyArray<{ method: string }> }): number => server.requests.filter((r) => r.method === 'GET').length;

describe('the readiness wait fails fast on what waiting cannot cure', () => {
  // vLLM and llama-server started with --api-key answer 401 to /v1/models without the right Bearer token.
  for (const status of [401, 403, 404]) {
    test(`HTTP ${status} on GET /v1/models ends the wait at once: one GET, exit 1, a hint`, TEST_TIMEOUT, async () => {
      await withScriptedClient(() => jsonStatus(status), {}, async (client, server) => {
        await assert.rejects(client.waitReady(LONG_WAIT_MS), (error: Error) => {
          assert.ok(error instanceof ServerRefusedError, String(error));
          assert.equal(error.exitCode, ExitCode.runFailed);
          assert.match(error.message, new RegExp(`answered GET /v1/models with HTTP ${status}: status ${status}$`));
          assert.match(error.hint!, status === 404 ? /check the URL/ : /check the API key/);
          return true;
        });
        assert.equal(gets(server), 1);
      });
    });
  }

  test('an unknown host ends the wait at once as bad input (exit 2); EAI_AGAIN is waited on', TEST_TIMEOUT, async () => {
    let lookups = 0;
    const lookup = failingLookup('ENOTFOUND');
    const counting: typeof lookup = (hostname, options, callback) => {
      lookups += 1;
      lookup(hostname, options, callback);
    };
    const client = new ChatClient({ baseUrl: 'http://no-such-host.invalid:8000', connections: 1, requestTimeoutMs: 5_000, lookup: counting });
    try {
      await assert.rejects(client.waitReady(LONG_WAIT_MS), (error: Error) => error instanceof ConfigError && error.exitCode === ExitCode.badInput && /its host name does not resolve \(ENOTFOUND\); check the URL/.test(error.message));
      assert.equal(lookups, 1);
    } finally {
      await client.close();
    }
    const again = new ChatClient({ baseUrl: 'http://no-such-host.invalid:8000', connections: 1, requestTimeoutMs: 5_000, lookup: failingLookup('EAI_AGAIN') });
    const causes: string[] = [];
    try {
      await assert.rejects(again.waitReady(400, undefined, (cause) => causes.push(cause)), (error: Error) => error instanceof ServerUnreachableError && /not ready within 400 ms .*EAI_AGAIN/.test(error.message));
      assert.ok(causes.length >= 1 && causes.every((c) => /EAI_AGAIN/.test(c)), causes.join('; '));
    } finally {
      await again.close();
    }
  });

  test('https:// to a server that speaks http fails the TLS handshake at once, and says to use http://', TEST_TIMEOUT, async () => {
    const server = await startScriptedServer(MODELS_RESPONSE);
    const client = new ChatClient({ baseUrl: server.url.replace('http://', 'https://'), connections: 1, requestTimeoutMs: 5_000 });
    try {
      await assert.rejects(client.waitReady(LONG_WAIT_MS), (error: Error) => {
        assert.ok(error instanceof ServerRefusedError, String(error));
        assert.match(error.message, /failed the TLS handshake \(ERR_SSL_WRONG_VERSION_NUMBER\)$/);
        assert.match(error.hint!, /speaks plain HTTP: use http:\/\//);
        return true;
      });
    } finally {
      await client.close();
      await server.close();
    }
  });

  // vLLM answers 503 while a model loads (its server is up before the engine): waited on, each retry's cause heard.
  test('a 503 while the model loads is waited on, and each retry says its cause', TEST_TIMEOUT, async () => {
    const causes: string[] = [];
    await withScriptedClient((request, index) => (index < 2 ? jsonStatus(503) : MODELS_RESPONSE), {}, async (client, server) => {
      const models = await client.waitReady(10_000, undefined, (cause) => causes.push(cause));
      assert.ok(models.length > 0);
      assert.equal(gets(server), 3);
    });
    assert.deepEqual(causes.map((c) => c.replace(/^GET \S+ /, '')), ['answered HTTP 503: status 503', 'answered HTTP 503: status 503']);
  });

  test('an API key with a line break is refused when the client is made, never sent', TEST_TIMEOUT, () => {
    assert.throws(() => new ChatClient({ baseUrl: 'http://127.0.0.1:9', connections: 1, requestTimeoutMs: 1_000, apiKey: 'sk-abc\n' }), (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /the authorization header holds a control character/);
      assert.ok(!error.message.includes('sk-abc'), 'the key is not shown');
      return true;
    });
  });
});
