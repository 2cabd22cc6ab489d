import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { closedPort, jsonStatus, MODELS_RESPONSE, startFixedTimingServer, startScriptedServer } from '../helpers/scripted-server.js';
import { runCli } from '../helpers/cli.js';
import { syntheticConversations } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURES } from '../helpers/tokenizers.js';

/** A bad-input run: exit 2, one line on stderr, no stack trace. */
function assertOneLineError(result: { code: number | null; stderr: string }, pattern: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  const lines = result.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got: ${result.stderr}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
}

describe('chatload run: bad input', () => {
  test('--help documents every option', { timeout: 30_000 }, async () => {
    const result = await runCli(['run', '--help']);
    assert.equal(result.code, 0);
    for (const flag of ['--input-file', '--num-clients', '--max-active-conversations', '--max-num-requests', '--no-early-stop', '--warmup-percentages', '--request-rate', '--replay-dataset-answers', '--benchmark-timeout-sec']) {
      assert.ok(result.stdout.includes(flag), flag);
    }
  });

  test('a dataset schema error names the file, conversation and message', { timeout: 30_000 }, async () => {
    const dir = tempDir('cli-bad');
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify([{ id: 'x', messages: [{ role: 'assistant', content: 'hi' }] }]));
    assertOneLineError(await runCli(['run', '-i', file, '--output-dir', dir]), /bad\.json, conversation 0 \(id "x"\), message 0: expected role "user"/);
  });

  test("commander's usage errors are one chatload: line too", { timeout: 30_000 }, async () => {
    assertOneLineError(await runCli(['run', '--no-such-flag']), /^chatload: unknown option '--no-such-flag'/);
    assertOneLineError(await runCli(['nope']), /^chatload: unknown command 'nope'/);
    assertOneLineError(await runCli(['run', '--num-clent', '2']), /^chatload: unknown option '--num-clent' \(Did you mean --num-clients\?\)$/);
    assertOneLineError(await runCli(['report']), /^chatload: missing required argument 'results-dir'/);
  });

  test('bad flag values exit 2 with one line', { timeout: 30_000 }, async () => {
    assertOneLineError(await runCli(['run', '-p', 'zero']), /num-clients.*positive integer/);
    assertOneLineError(await runCli(['run', '--conversation-sampling', 'sideways']), /sideways/);
    assertOneLineError(await runCli(['run', '--limit-min-tokens', '5']), /--limit-min-tokens/);
    assertOneLineError(await runCli(['run', '-p', '4', '-k', '2']), /--max-active-conversations: must be at least --num-clients/);
  });

  test('an unreachable server is a clear one-line error, exit 1', { timeout: 30_000 }, async () => {
    const port = await closedPort();
    const dir = tempDir('cli-unreachable');
    const result = await runCli(['run', '-u', `http://127.0.0.1:${port}`, '--ready-timeout-sec', '0.5', '--output-dir', dir]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr.trim(), /^chatload: cannot reach the server at http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.doesNotMatch(result.stderr, /pass -u/, 'the URL was given: the hint never says to pass it');
  });

  // vLLM and llama-server started with --api-key answer 401 to /v1/models without the key (issue #34, item 2).
  test('HTTP 401 on /v1/models ends the 60 s wait at once: one line with the hint, exit 1', { timeout: 30_000 }, async () => {
    const server = await startScriptedServer(() => jsonStatus(401));
    try {
      const result = await runCli(['run', '-u', server.url, '--output-dir', tempDir('cli-401')]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr.trim(), /^chatload: the server at http:\/\/127\.0\.0\.1:\d+ answered GET \/v1\/models with HTTP 401: status 401 \(check the API key \(--api-key or OPENAI_API_KEY\) or the --header that authorizes\)$/);
      assert.equal(server.requests.filter((r) => r.method === 'GET').length, 1, 'one GET: the wait ended at once');
    } finally {
      await server.close();
    }
  });
});

describe('chatload run: a run that fails says why', () => {
  test('every request failing (warmup included) exits 1 and prints the top error messages even with -q', { timeout: 60_000 }, async () => {
    const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : jsonStatus(404)));
    const dir = tempDir('cli-all-failed');
    try {
      const input = join(dir, 'in.json');
      writeFileSync(input, JSON.stringify(syntheticConversations({ count: 3, userTurns: () => 2 })));
      const result = await runCli(['run', '-u', server.url, '-i', input, '--warmup-step', '-q', '--output-dir', join(dir, 'out')]);
      assert.equal(result.code, 1, result.stderr);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines[0], 'chatload: every request failed (warmup included): nothing was measured');
      assert.match(lines[1] ?? '', /^ {2}\d+ × http_status: HTTP 404: status 404$/);
      assert.equal(lines.length, 2, 'one distinct message, and nothing else with -q');
    } finally {
      await server.close();
    }
  });
});

describe('chatload run: reference conventions', () => {
  test('--generate-only writes the dataset the run would replay and contacts no server', { timeout: 60_000 }, async () => {
    const dir = tempDir('cli-generate-only');
    const config = join(dir, 'gen.json');
    const fixture = JSON.parse(readFileSync(join(FIXTURES, 'generate_multi_turn.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(config, JSON.stringify({ ...fixture, num_conversations: 3, text_files: [join(FIXTURES, 'corpus-voyage.txt')] }));
    const out = join(dir, 'conversations.json');
    // A URL nothing listens on: the run would fail on it, generate-only never goes there.
    const result = await runCli(['run', '-i', config, '-o', out, '--generate-only', '-u', `http://127.0.0.1:${await closedPort()}`]);
    assert.equal(result.code, 0, result.stderr);
    const written = JSON.parse(readFileSync(out, 'utf8')) as { id: string; messages: unknown[] }[];
    assert.equal(written.length, 3);
    assert.ok(written.every((c) => c.messages.length >= 12 && c.messages.length <= 18), 'every generated conversation has the config\'s 12-18 messages');
    assert.match(result.stderr, /wrote 3 conversations from .*gen\.json to .*conversations\.json/);
  });

  test('OPENAI_BASE_URL (with its /v1) is the default --url', { timeout: 60_000 }, async () => {
    const server = await startFixedTimingServer({ ttftMs: 1, itlMs: 1, tokens: 4 });
    const dir = tempDir('cli-base-url');
    try {
      const input = join(dir, 'in.json');
      writeFileSync(input, JSON.stringify(syntheticConversations({ count: 2, userTurns: () => 1 })));
      const result = await runCli(['run', '-i', input, '--output-dir', join(dir, 'out')], { env: { OPENAI_BASE_URL: `${server.url}/v1` } });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, new RegExp(`against ${server.url.replace(/[.]/g, '\\.')}/v1`));
      // The start line says the load, and where a defaulted -p came from (issue #34: -p 1 ran 4 minutes with no hint).
      assert.match(result.stderr, /; load -p 1 -k 1 \(-p's default against --url; the built-in demo uses 16\); results in /);
      assert.equal(server.requests.filter((r) => r.method === 'POST').length, 2);
    } finally {
      await server.close();
    }
  });
});

describe('chatload run: a real run', () => {
  test('prints the summary, writes the files, and never writes the API key', { timeout: 60_000 }, async () => {
    const server = await startFixedTimingServer({ ttftMs: 5, itlMs: 1, tokens: 8 });
    const dir = tempDir('cli-run');
    try {
      const input = join(dir, 'in.json');
      writeFileSync(input, JSON.stringify(syntheticConversations({ count: 4, userTurns: () => 2 })));
      const secret = 'sk-test-SECRET-value-123';
      const result = await runCli(
        ['run', '-u', server.url, '-i', input, '-p', '2', '--api-key', secret, '--header', `Authorization: Bearer ${secret}`, '--output-dir', dir, '--stats-json-output', join(dir, 'stats.json')],
        { env: { OPENAI_API_KEY: 'sk-env-SECRET-456' } },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /; load -p 2 -k 2; results in /, 'a given -p is said as given');
      assert.match(result.stdout, /ttft_ms/);
      assert.match(result.stdout, /completed/i);
      assert.ok(server.requests.some((r) => r.headers.authorization === `Bearer ${secret}`), 'the key is sent');
      for (const name of readdirSync(dir)) {
        const text = readFileSync(join(dir, name), 'utf8');
        assert.ok(!text.includes('SECRET'), `${name} contains a secret`);
      }
      assert.ok(!result.stdout.includes('SECRET') && !result.stderr.includes('SECRET'));
    } finally {
      await server.close();
    }
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    test(`${signal} while waiting for the server: exit 130, one line, no internal error (issue #35)`, { timeout: 60_000 }, async () => {
      // A port nobody listens on: refused, so the readiness wait goes on (a server may be starting) until the signal.
      const port = await closedPort();
      const dir = tempDir('cli-signal-ready');
      let sent = false;
      const result = await runCli(['run', '-u', `http://127.0.0.1:${port}`, '--ready-timeout-sec', '30', '--output-dir', join(dir, 'out')], {
        onStdout: (text, child) => {
          if (!sent && /waiting|wait/i.test(text)) {
            sent = true;
            child.kill(signal);
          }
        },
      });
      assert.ok(sent, `the run said it was waiting: ${result.stderr}`);
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /interrupted while waiting for http:\/\/127\.0\.0\.1:\d+ to answer/);
      assert.doesNotMatch(result.stderr, /internal error/);
    });
  }

  test('SIGINT stops new requests, writes every result file and exits 130', { timeout: 60_000 }, async () => {
    const server = await startFixedTimingServer({ ttftMs: 20, itlMs: 20, tokens: 20 });
    const dir = tempDir('cli-sigint');
    try {
      const input = join(dir, 'in.json');
      writeFileSync(input, JSON.stringify(syntheticConversations({ count: 50, userTurns: () => 10 })));
      let sent = false;
      const result = await runCli(['run', '-u', server.url, '-i', input, '-p', '4', '-v', '--output-dir', dir], {
        onStdout: (text, child) => {
          if (!sent && (text.match(/ turn \d+ \(client/g) ?? []).length >= 6) {
            sent = true;
            child.kill('SIGINT');
          }
        },
      });
      assert.ok(sent, 'the run produced records before the signal');
      assert.equal(result.code, 130, result.stderr);
      assert.ok(existsSync(join(dir, 'results.json')));
      const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { completed: number; failed: number; stop_reason: string };
      assert.equal(results.stop_reason, 'interrupted');
      const lines = readFileSync(join(dir, 'requests.jsonl'), 'utf8').trim().split('\n');
      assert.equal(lines.length, results.completed + results.failed);
      assert.ok(results.completed >= 6);
      assert.ok(lines.length < 500, 'it stopped early');
    } finally {
      await server.close();
    }
  });
});
