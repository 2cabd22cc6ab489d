// Credentials in the base URL (issue #16): sent as Basic auth, as curl sends them, to every request; shown nowhere.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatClient } from '../../src/client/chat-client.js';
import { splitUrlCredentials } from '../../src/client/url-credentials.js';
import { ConfigError } from '../../src/errors/index.js';
import { MetricsScraper } from '../../src/server-metrics/scraper.js';
import { chatRequest } from '../helpers/client-test-utils.js';
import { runMatrixCase } from '../helpers/matrix.js';
import { MODELS_RESPONSE, SHORT_ANSWER, startScriptedServer, type RecordedRequest, type ScriptedResponse } from '../helpers/scripted-server.js';
import { resetPrefixCache } from '../../src/server-engine/reset-cache.js';

const basic = (userAndPassword: string): string => `Basic ${Buffer.from(userAndPassword, 'utf8').toString('base64')}`;

/** A server that answers 401 (echoing the Authorization it got) unless the request carries `expected`. */
async function checkingServer(expected: string) {
  return startScriptedServer((request: RecordedRequest): ScriptedResponse => {
    if (request.headers.authorization !== expected) {
      return {
        status: 401,
        headers: { 'content-type': 'application/json' },
        actions: [{ write: JSON.stringify({ error: { message: `bad auth ${request.headers.authorization ?? 'none'}` } }) }, { end: true }],
      };
    }
    if (request.url === '/metrics') return { headers: { 'content-type': 'text/plain' }, actions: [{ write: 'vllm:num_requests_running 1\n' }, { end: true }] };
    return request.method === 'GET' ? MODELS_RESPONSE : SHORT_ANSWER;
  });
}

describe('credentials in the URL', () => {
  test('are split off as curl reads them: percent-decoded, a lone user with an empty password', () => {
    const both = splitUrlCredentials(new URL('http://al%40ice:p%3Ass%20word@h:8000/v1'));
    assert.equal(both.url.href, 'http://h:8000/v1');
    assert.equal(both.authorization, basic('al@ice:p:ss word'));
    assert.ok(both.secrets.includes('p%3Ass%20word') && both.secrets.includes('p:ss word'));
    assert.ok(!both.secrets.includes('al@ice'), 'with a password, the user name is not a secret');
    const lone = splitUrlCredentials(new URL('https://tok-123456@h/'));
    assert.equal(lone.authorization, basic('tok-123456:'));
    assert.ok(lone.secrets.includes('tok-123456'));
    const none = splitUrlCredentials(new URL('http://h:1/'));
    assert.equal(none.authorization, undefined);
    assert.deepEqual(none.secrets, []);
  });

  test('go as Basic auth with every request (models, chat, reset), and the server that checks them accepts', { timeout: 20_000 }, async () => {
    const server = await checkingServer(basic('alice:s3cr3t-pw'));
    const client = new ChatClient({ baseUrl: server.url.replace('http://', 'http://alice:s3cr3t-pw@'), connections: 1, requestTimeoutMs: 5_000 });
    try {
      assert.equal((await client.waitReady(5_000))[0]?.id, 'test-model');
      const result = await client.send(chatRequest());
      assert.equal(result.error, undefined);
      assert.equal(result.content.length > 0, true);
      // The cache reset goes through the engine profile's probe, with the client's auth headers.
      await resetPrefixCache('vllm', { rootUrl: server.url, headers: client.authHeaders });
      assert.equal(server.requests.length, 3);
      for (const request of server.requests) {
        assert.equal(request.headers.authorization, basic('alice:s3cr3t-pw'), request.url);
        assert.ok(!request.url.includes('s3cr3t'), 'not in the request line');
      }
      assert.equal(client.authHeaders.authorization, basic('alice:s3cr3t-pw'), 'other requests to the server get the same auth');
    } finally {
      await server.close();
      await client.close();
    }
  });

  test('win over an API key; a --header Authorization wins over both, as in curl', { timeout: 20_000 }, async () => {
    const server = await checkingServer(basic('alice:s3cr3t-pw'));
    const url = server.url.replace('http://', 'http://alice:s3cr3t-pw@');
    const withKey = new ChatClient({ baseUrl: url, apiKey: 'sk-other', connections: 1, requestTimeoutMs: 5_000 });
    const withHeader = new ChatClient({ baseUrl: url, headers: { Authorization: 'Bearer hdr-123456' }, connections: 1, requestTimeoutMs: 5_000 });
    try {
      assert.equal((await withKey.send(chatRequest())).error, undefined);
      const refused = await withHeader.send(chatRequest());
      assert.equal(refused.error?.kind, 'http_status');
      assert.equal(server.requests.at(-1)?.headers.authorization, 'Bearer hdr-123456');
    } finally {
      await server.close();
      await Promise.all([withKey.close(), withHeader.close()]);
    }
  });

  test('never reach an error message, even when the server echoes the Authorization header', { timeout: 20_000 }, async () => {
    const server = await checkingServer('nothing matches');
    const client = new ChatClient({ baseUrl: server.url.replace('http://', 'http://alice:s3cr3t-pw@'), connections: 1, requestTimeoutMs: 5_000 });
    try {
      const result = await client.send(chatRequest());
      assert.equal(result.error?.kind, 'http_status');
      // The whole header value is a secret now, its scheme with it (issue #35: also the token alone, base64, decoded).
      assert.match(result.error!.message, /bad auth \[redacted\]/);
      assert.ok(!JSON.stringify(result.error).includes(basic('alice:s3cr3t-pw').slice(6)));
      await assert.rejects(client.listModels(), (error: Error) => !error.message.includes('s3cr3t') && /\[redacted\]/.test(error.message));
      assert.throws(
        () => new ChatClient({ baseUrl: 'ftp://alice:s3cr3t-pw@h', connections: 1, requestTimeoutMs: 1 }),
        (error: Error) => error instanceof ConfigError && !error.message.includes('s3cr3t-pw'),
      );
    } finally {
      await server.close();
      await client.close();
    }
  });

  test('the /metrics scraper sends its URL credentials, or else the client\'s auth, and reports the URL without them', { timeout: 20_000 }, async () => {
    const server = await checkingServer(basic('bob:metrics-pw'));
    try {
      const own = new MetricsScraper(`${server.url.replace('http://', 'http://bob:metrics-pw@')}/metrics`, { intervalMs: 60_000, headers: { authorization: 'Bearer x' } });
      await own.start();
      const report = await own.stop();
      assert.equal(report.failures, 0, report.last_error ?? '');
      assert.equal(report.url, `${server.url}/metrics`);
      const inherited = new MetricsScraper(`${server.url}/metrics`, { intervalMs: 60_000, headers: { authorization: basic('bob:metrics-pw') } });
      await inherited.start();
      assert.equal((await inherited.stop()).failures, 0);
    } finally {
      await server.close();
    }
  });

  test('a run with both URL credentials and an API key sends Basic, warns once that the key is not sent, and shows the URL redacted', { timeout: 30_000 }, async () => {
    const server = await checkingServer(basic('alice:s3cr3t-pw'));
    try {
      const warnings: string[] = [];
      let startUrl = '';
      const url = server.url.replace('http://', 'http://alice:s3cr3t-pw@');
      const { result } = await runMatrixCase(url, { conversations: 1, userTurns: 1 }, { apiKey: 'sk-unused-123' }, {
        observer: { onWarning: (message) => warnings.push(message) },
        onStart: (info) => (startUrl = info.url),
      });
      assert.equal(result.summary.completed, 1);
      assert.deepEqual(warnings.filter((w) => /URL carries credentials/.test(w)), ['the URL carries credentials, sent as Basic auth; the API key (--api-key or OPENAI_API_KEY) is not sent']);
      assert.equal(startUrl, server.url.replace('http://', 'http://alice:[redacted]@'));
      assert.equal(result.url, startUrl);
    } finally {
      await server.close();
    }
  });
});
