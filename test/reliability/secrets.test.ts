// No secrets in any output: an API key given by flag, by environment or as a header is sent to the server but never
// reaches a file the run writes (every file, the .xlsx decompressed), stdout or stderr, even when the server echoes
// the key back in an error body or an error event.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { syntheticConversations } from '../helpers/datasets.js';
import { MODELS_RESPONSE, SHORT_ANSWER, sseEvent, startScriptedServer, type RecordedRequest, type ScriptedResponse } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';
import { readZipEntries } from '../helpers/zip.js';


/**
 * What a careless server does: quote the request's headers back in its error, and each credential alone (the token
 * after its scheme: `invalid token: T`), base64-encoded, and a Basic token decoded (issue #35: a token given with
 * --header leaked when echoed without its `Bearer `).
 */
function echo(request: RecordedRequest): string {
  const tokens = Object.values(request.headers)
    .filter((value): value is string => typeof value === 'string' && /^(Bearer|Basic) /.test(value))
    .map((value) => value.slice(value.indexOf(' ') + 1));
  const decoded = tokens.map((token) => Buffer.from(token, 'base64').toString('utf8')).filter((text) => /^[\x20-\x7e]+$/.test(text));
  const encoded = tokens.map((token) => Buffer.from(token, 'utf8').toString('base64'));
  // The tokens first: an error message is cut at 200 characters.
  return `invalid credentials: token ${tokens.join(', ')} (${encoded.join(', ')}) ${decoded.join(', ')}; headers ${JSON.stringify(request.headers)}`;
}

/**
 * Chat request 1 gets a 401 that echoes the headers (not retried: a failed record), request 3 a 500 that echoes them
 * (retried), request 5 an SSE error event that echoes them (a malformed_stream record); the rest are answered.
 */
async function echoingServer() {
  let chats = 0;
  return startScriptedServer((request) => {
    if (request.method === 'GET') return MODELS_RESPONSE;
    chats += 1;
    const json = (status: number): ScriptedResponse => ({
      status,
      headers: { 'content-type': 'application/json', 'retry-after': '0' },
      actions: [{ write: JSON.stringify({ error: { message: echo(request) } }) }, { end: true }],
    });
    if (chats === 1) return json(401);
    if (chats === 3) return json(500);
    if (chats === 5) return { actions: [{ write: sseEvent({ error: { message: echo(request) } }) }, { end: true }] };
    return SHORT_ANSWER;
  });
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The text of a file as a person or a program would read it: an .xlsx is unzipped and every part inflated. */
function searchableText(path: string): string {
  const bytes = readFileSync(path);
  if (path.endsWith('.xlsx')) return readZipEntries(bytes).map((entry) => `${entry.name}\n${entry.data.toString('utf8')}`).join('\n');
  return bytes.toString('utf8');
}

interface SecretCase {
  name: string;
  secret: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  sentAs: (request: RecordedRequest) => boolean;
  /** The -u URL made from the server's; default: as it is. */
  url?: (serverUrl: string) => string;
  /** Further strings no output may hold (the Basic token of URL credentials). */
  alsoSecret?: string[];
}

const BASIC = `Basic ${Buffer.from('alice:url-SECRET-9b1d', 'utf8').toString('base64')}`;

const CASES: SecretCase[] = [
  {
    name: 'by flag (--api-key)',
    secret: 'sk-flag-SECRET-7f3a9c',
    args: ['--api-key', 'sk-flag-SECRET-7f3a9c'],
    env: {},
    sentAs: (r) => r.headers.authorization === 'Bearer sk-flag-SECRET-7f3a9c',
  },
  {
    name: 'by environment (OPENAI_API_KEY)',
    secret: 'sk-env-SECRET-41d2e8',
    args: [],
    env: { OPENAI_API_KEY: 'sk-env-SECRET-41d2e8' },
    sentAs: (r) => r.headers.authorization === 'Bearer sk-env-SECRET-41d2e8',
  },
  {
    name: 'by header (--header Authorization, and a custom one in the Name=value form)',
    secret: 'hdr-SECRET-c0ffee',
    args: ['--header', 'Authorization: Bearer hdr-SECRET-c0ffee', '--header', 'X-Gateway-Token=hdr-SECRET-c0ffee-2'],
    env: {},
    sentAs: (r) => r.headers.authorization === 'Bearer hdr-SECRET-c0ffee' && r.headers['x-gateway-token'] === 'hdr-SECRET-c0ffee-2',
  },
  {
    // Issue #16: the password was printed in the start line and never sent. Now Basic auth, to /metrics as well.
    name: 'in the URL (http://alice:SECRET@host), with --scrape-metrics',
    secret: 'url-SECRET-9b1d',
    args: ['--scrape-metrics'],
    env: {},
    url: (serverUrl) => serverUrl.replace('http://', 'http://alice:url-SECRET-9b1d@'),
    sentAs: (r) => r.headers.authorization === BASIC,
    alsoSecret: [BASIC.slice('Basic '.length)],
  },
];

describe('secrets never reach an output', () => {
  for (const c of CASES) {
    test(`an API key ${c.name}`, { timeout: 60_000 }, async () => {
      const server = await echoingServer();
      const dir = tempDir('secrets');
      const outDir = join(dir, 'out');
      try {
        const input = join(dir, 'in.json');
        writeFileSync(input, JSON.stringify(syntheticConversations({ count: 4, userTurns: () => 2 })));
        const result = await runCli(
          [
            'run', '-u', c.url?.(server.url) ?? server.url, '-i', input, '-p', '2', '--no-early-stop', '--max-retries', '1', '--max-error-rate', '1',
            '--output-dir', outDir, '-e', '--csv', '--stats-json-output', join(outDir, 'stats.json'), '-o', join(outDir, 'conversations.json'),
            '-v', '--print-content', ...c.args,
          ],
          // Without a key by environment, clear any the test runner inherited.
          { env: { OPENAI_API_KEY: '', ...c.env } },
        );
        assert.equal(result.code, 0, result.stderr);
        const chats = server.requests.filter((r) => r.method === 'POST');
        assert.ok(chats.length >= 6, `${chats.length} chat requests`);
        assert.ok(chats.every(c.sentAs), 'the key is sent with every request');
        // Every other request to the server (readiness, /metrics scrapes) carries the same auth.
        const gets = server.requests.filter((r) => r.method === 'GET');
        assert.ok(gets.length >= (c.args.includes('--scrape-metrics') ? 3 : 1), `${gets.length} GET requests`);
        assert.ok(gets.every(c.sentAs), `every GET carries the auth: ${gets.map((r) => r.url).join(', ')}`);
        const written = filesUnder(outDir).map((path) => path.slice(outDir.length + 1)).sort();
        for (const name of ['conversations.json', 'report.html', 'report.xlsx', 'requests.csv', 'requests.jsonl', 'results.json', 'stats.json']) {
          assert.ok(written.includes(name), `${name} was written (got ${written.join(', ')})`);
        }
        // The echoed errors did reach the records, so the check below is not vacuous.
        const jsonl = readFileSync(join(outDir, 'requests.jsonl'), 'utf8');
        assert.match(jsonl, /invalid credentials/);
        assert.match(jsonl, /"error_kind":"malformed_stream"/);
        // The workbook was really read (unzipped and inflated): its Raw data holds the echoed error text too.
        assert.match(searchableText(join(outDir, 'report.xlsx')), /invalid credentials/);
        assert.match(searchableText(join(outDir, 'report.html')), /invalid credentials/);
        for (const name of written) {
          const text = searchableText(join(outDir, name));
          assert.ok(!text.includes(c.secret), `${name} contains the key`);
          assert.ok(!text.includes(Buffer.from(c.secret, 'utf8').toString('base64')), `${name} contains the key base64-encoded`);
          assert.ok(!text.includes('SECRET'), `${name} contains part of the key`);
          for (const other of c.alsoSecret ?? []) assert.ok(!text.includes(other), `${name} contains ${other}`);
        }
        for (const other of c.alsoSecret ?? []) assert.ok(!result.stdout.includes(other) && !result.stderr.includes(other), `the output shows ${other}`);
        assert.ok(!result.stdout.includes('SECRET'), 'stdout contains the key');
        assert.ok(!result.stderr.includes('SECRET'), `stderr contains the key: ${result.stderr}`);
        assert.ok(!result.stderr.includes(Buffer.from(c.secret, 'utf8').toString('base64')), 'stderr contains the key base64-encoded');
        assert.match(result.stderr, /invalid credentials/, 'the verbose lines showed the echoed errors (redacted)');
      } finally {
        await server.close();
      }
    });
  }
});
