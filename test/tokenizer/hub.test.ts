import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError } from '../../src/errors/index.js';
import { countPromptTokens, resolveTokenCounter } from '../../src/tokenizer/index.js';
import { tempDir } from '../helpers/tmp.js';
import { LLAMA2_DIR, QWEN3_DIR } from '../helpers/tokenizers.js';

const REPO = 'chatload-test/tiny-llama';
const COMMIT = 'a'.repeat(40);
const FILES: Record<string, Buffer> = {
  'tokenizer.json': readFileSync(join(LLAMA2_DIR, 'tokenizer.json')),
  'tokenizer_config.json': Buffer.from(
    JSON.stringify({
      ...JSON.parse(readFileSync(join(LLAMA2_DIR, 'tokenizer_config.json'), 'utf8')),
      chat_template: "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}",
    }),
  ),
};
const TOKEN = 'hf_test_token';

/** A minimal Hugging Face Hub on 127.0.0.1: the revision, paths-info and resolve endpoints @huggingface/hub uses. */
class FakeHub {
  readonly requests: string[] = [];
  readonly authorizations = new Set<string>();
  #server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      this.requests.push(`${req.method} ${req.url}`);
      if (req.headers.authorization) this.authorizations.add(req.headers.authorization);
      void this.#handle(req).then(({ status, headers, body }) => {
        res.writeHead(status, headers);
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async #handle(req: IncomingMessage): Promise<{ status: number; headers: Record<string, string>; body?: Buffer | string }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url!, 'http://x');
    const json = (status: number, value: unknown) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
    const known = (repo: string) => repo === REPO;
    let m = /^\/api\/models\/(.+)\/revision\/([^/]+)$/.exec(url.pathname);
    if (m && req.method === 'GET') return known(m[1]!) ? json(200, { id: m[1], sha: COMMIT }) : json(404, { error: 'Repository not found' });
    m = /^\/api\/models\/(.+)\/paths-info\/([^/]+)$/.exec(url.pathname);
    if (m && req.method === 'POST') {
      const { paths } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { paths: string[] };
      return json(
        200,
        paths.filter((p) => FILES[p]).map((p) => ({ type: 'file', path: p, size: FILES[p]!.length, oid: sha1(FILES[p]!), lastCommit: { id: COMMIT, title: 'x', date: new Date(0).toISOString() } })),
      );
    }
    m = /^\/(.+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (m && req.method === 'GET') {
      const file = FILES[m[3]!];
      if (!file) return { status: 404, headers: { 'x-error-code': 'EntryNotFound' }, body: 'not found' };
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      const etag = `"${sha1(file)}"`;
      if (!range) return { status: 200, headers: { etag, 'content-length': String(file.length) }, body: file };
      const start = Number(range[1]);
      const end = range[2] === '' ? file.length - 1 : Math.min(Number(range[2]), file.length - 1);
      return { status: 206, headers: { etag, 'content-range': `bytes ${start}-${end}/${file.length}` }, body: file.subarray(start, end + 1) };
    }
    return json(404, { error: `unexpected ${req.method} ${url.pathname}` });
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()));
  }
}

function sha1(data: Buffer): string {
  return createHash('sha1').update(data).digest('hex');
}

describe('Hugging Face Hub download (local fake hub)', { timeout: 60_000 }, () => {
  const hub = new FakeHub();
  const home = tempDir('hf-home');
  before(() => hub.start());
  after(() => hub.close());

  test('downloads into the HF cache layout, then an offline run hits the cache', async () => {
    const env = { HF_ENDPOINT: hub.url, HF_HOME: home, HF_TOKEN: TOKEN };
    const counter = await resolveTokenCounter({ tokenizer: REPO, env });
    assert.equal(counter.source, REPO);
    assert.equal(counter.tokenizer.exact, true);
    assert.ok(hub.requests.some((r) => r.startsWith(`GET /${REPO}/resolve/${COMMIT}/tokenizer.json`)));
    assert.deepEqual([...hub.authorizations], [`Bearer ${TOKEN}`]);
    const snapshot = join(home, 'hub', 'models--chatload-test--tiny-llama', 'snapshots', COMMIT);
    assert.ok(readFileSync(join(snapshot, 'tokenizer.json')).equals(FILES['tokenizer.json']!));
    assert.equal(readFileSync(join(home, 'hub', 'models--chatload-test--tiny-llama', 'refs', 'main'), 'utf8'), COMMIT);
    // The model's own template is used: bos, then "[role] content" lines.
    const prompt = counter.template.apply([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true });
    assert.equal(prompt, '<s>[user] hi\n[assistant] ');
    const llama = await resolveTokenCounter({ tokenizer: LLAMA2_DIR });
    assert.deepEqual(counter.tokenizer.encode('The ship left port.'), llama.tokenizer.encode('The ship left port.'));

    const seen = hub.requests.length;
    const offline = await resolveTokenCounter({ tokenizer: REPO, env: { HF_ENDPOINT: 'http://127.0.0.1:9', HF_HOME: home, HF_HUB_OFFLINE: '1' } });
    assert.equal(hub.requests.length, seen, 'offline: no request');
    assert.equal(countPromptTokens(offline, [{ role: 'user', content: 'hello there' }]), countPromptTokens(counter, [{ role: 'user', content: 'hello there' }]));
    // -m resolves from the cache without any download.
    const warnings: string[] = [];
    const byModel = await resolveTokenCounter({ model: REPO, env: { HF_HOME: home, HF_HUB_OFFLINE: '1' }, warn: (w) => warnings.push(w) });
    assert.equal(byModel.tokenizer.exact, true);
    assert.deepEqual(warnings, []);
  });

  test('offline cache miss, unknown repo and unreachable hub are one-line ConfigErrors', async () => {
    const fresh = tempDir('hf-empty');
    const check = (pattern: RegExp) => (e: unknown) => e instanceof ConfigError && e.exitCode === 2 && !e.message.includes('\n') && pattern.test(e.message);
    await assert.rejects(resolveTokenCounter({ tokenizer: REPO, env: { HF_HOME: fresh, HF_HUB_OFFLINE: '1' } }), check(/not in the Hugging Face cache .*HF_HUB_OFFLINE/));
    await assert.rejects(resolveTokenCounter({ tokenizer: 'nobody/nothing', env: { HF_HOME: fresh, HF_ENDPOINT: hub.url } }), check(/no such model or revision \(HTTP 404\)/));
    await assert.rejects(resolveTokenCounter({ tokenizer: 'nobody/nothing', env: { HF_HOME: fresh, HF_ENDPOINT: 'http://127.0.0.1:9' } }), check(/cannot download nobody\/nothing/));
  });
});

describe('default tokenizer of -m', { timeout: 30_000 }, () => {
  test('a local model folder; an unknown model falls back to approx with a warning that says how to get exact counts', async () => {
    const counter = await resolveTokenCounter({ model: QWEN3_DIR });
    assert.equal(counter.tokenizer.exact, true);
    const warnings: string[] = [];
    const approx = await resolveTokenCounter({ model: 'someone/unknown-model', env: { HF_HOME: tempDir('hf-none') }, warn: (w) => warnings.push(w) });
    assert.equal(approx.tokenizer.name, 'approx');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /approximate.*--tokenizer someone\/unknown-model/);
  });
});
