import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import * as undici from 'undici';
import { Agent, request } from '../../src/util/undici.js';

// src/util/undici.ts loads undici's Agent and request by file path to skip the rest of undici at start-up: these
// check that they are still the objects undici's index exports and that request() sends what undici's would.
let server: Server;
let base: string;
const seen: Array<{ method: string; url: string; body: string }> = [];

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      res.writeHead(201, { 'content-type': 'text/plain', 'x-echo': req.headers['x-test'] ?? '' });
      res.end(`${req.method} ${req.url}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await undici.getGlobalDispatcher().close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('Agent is the class undici exports', () => {
  assert.equal(Agent, undici.Agent);
});

test('request() through an Agent: method, path with query, headers and body as undici.request sends them', async () => {
  const agent = new Agent({ connections: 1 });
  try {
    const mine = await request(`${base}/v1/chat?x=1`, { method: 'POST', headers: { 'x-test': 'a' }, body: '{"k":1}', dispatcher: agent });
    assert.equal(mine.statusCode, 201);
    assert.equal(mine.headers['x-echo'], 'a');
    assert.equal(await mine.body.text(), 'POST /v1/chat?x=1');
    const theirs = await undici.request(`${base}/v1/chat?x=1`, { method: 'POST', headers: { 'x-test': 'a' }, body: '{"k":1}', dispatcher: agent });
    assert.equal(await theirs.body.text(), 'POST /v1/chat?x=1');
    assert.deepEqual(seen.at(-2), seen.at(-1));
    assert.deepEqual(seen.at(-1), { method: 'POST', url: '/v1/chat?x=1', body: '{"k":1}' });
  } finally {
    await agent.close();
  }
});

test('request() without a dispatcher uses the global one, GET by default', async () => {
  const response = await request(new URL('/metrics', base));
  assert.equal(response.statusCode, 201);
  assert.equal(await response.body.text(), 'GET /metrics');
});
