import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { registerServeCommand, runServe, type ServeCliOptions } from '../../src/cli/serve.js';
import { ChatloadError, ConfigError } from '../../src/errors/index.js';
import { startSimulator, startSimulatorWorker } from '../../src/sim/index.js';
import { raw } from './sim-http.js';

const CLI_DEFAULTS: ServeCliOptions = { host: '127.0.0.1', port: 0, profile: 'cpu-tiny', tokenizer: 'approx', seed: 0, modelName: 'chatload-sim' };

describe('startSimulatorWorker', () => {
  test('starts in a worker thread, serves a request and closes', { timeout: 20_000 }, async () => {
    const sim = await startSimulatorWorker({ profile: 'cpu-tiny', modelName: 'w' });
    try {
      assert.match(sim.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await raw(sim.url, '/v1/chat/completions', { model: 'w', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
      assert.equal(res.status, 200);
      assert.equal((JSON.parse(res.body) as { usage: { completion_tokens: number } }).usage.completion_tokens, 3);
    } finally {
      await sim.close();
    }
  });

  test('bad options reject with the ConfigError exit code', { timeout: 20_000 }, async () => {
    await assert.rejects(startSimulatorWorker({ profile: 'nope' }), (e: ChatloadError) => e.exitCode === 2 && /cpu-tiny/.test(e.message));
  });
});

describe('startSimulator options', () => {
  test('a port in use rejects with a ChatloadError naming host:port', { timeout: 10_000 }, async () => {
    const first = await startSimulator();
    try {
      await assert.rejects(startSimulator({ port: first.port }), (e: unknown) => e instanceof ChatloadError && e.message.includes(`127.0.0.1:${first.port}`));
    } finally {
      await first.close();
    }
  });

  test('unknown profile and bad config keys are ConfigErrors naming them', async () => {
    await assert.rejects(startSimulator({ profile: 'gpu-huge' }), (e: unknown) => e instanceof ConfigError && /h100-8b/.test(e.message));
    await assert.rejects(startSimulator({ config: { max_num_seqs: -1 } }), (e: unknown) => e instanceof ConfigError && /max_num_seqs/.test(e.message));
    await assert.rejects(startSimulator({ config: { bogus: 1 } as never }), (e: unknown) => e instanceof ConfigError && /bogus/.test(e.message));
    await assert.rejects(startSimulator({ faults: 'x=1' }), ConfigError);
  });
});

describe('chatload serve', () => {
  test('prints its URL, serves, and closes when signalled', { timeout: 10_000 }, async () => {
    const controller = new AbortController();
    const lines: string[] = [];
    let resolveUrl!: (url: string) => void;
    const urlKnown = new Promise<string>((r) => (resolveUrl = r));
    const done = runServe(CLI_DEFAULTS, controller.signal, (line) => {
      lines.push(line);
      resolveUrl(/listening on (\S+)/.exec(line)![1]!);
    });
    const url = await urlKnown;
    assert.match(lines[0]!, /^chatload serve: listening on http:\/\/127\.0\.0\.1:\d+ \(profile cpu-tiny, model chatload-sim\)$/);
    assert.equal((await raw(url, '/health')).status, 200);
    controller.abort();
    await done;
  });

  test("an empty --host (every interface), an empty --model-name and a KV cache it cannot allocate are refused in one line (issue #35)", { timeout: 10_000 }, async () => {
    const signal = AbortSignal.abort();
    await assert.rejects(runServe({ ...CLI_DEFAULTS, host: '' }, signal), (e: unknown) => e instanceof ConfigError && /^--host: .*every interface/.test(e.message));
    await assert.rejects(runServe({ ...CLI_DEFAULTS, modelName: ' ' }, signal), (e: unknown) => e instanceof ConfigError && /^--model-name: /.test(e.message));
    await assert.rejects(startSimulator({ config: { num_gpu_blocks: 1e12 } }), (e: unknown) => e instanceof ConfigError && /num_gpu_blocks.*at most/.test(e.message) && e.hint === undefined);
  });

  test('an unknown --tokenizer encoding and a bad --config file are ConfigErrors naming the problem', { timeout: 10_000 }, async () => {
    const signal = AbortSignal.abort();
    // A tiktoken encoding name is checked locally (a bare name such as gpt2 would be a Hub download).
    await assert.rejects(runServe({ ...CLI_DEFAULTS, tokenizer: 'tiktoken:nope' }, signal), (e: unknown) => e instanceof ConfigError && /unknown encoding/.test(e.message));
    const dir = await mkdtemp(join(tmpdir(), 'chatload-serve-'));
    try {
      const file = join(dir, 'sim.json');
      await writeFile(file, JSON.stringify({ max_num_seqs: 'many' }));
      await assert.rejects(runServe({ ...CLI_DEFAULTS, config: file }, signal), (e: unknown) => e instanceof ConfigError && e.message.includes(file) && e.message.includes('max_num_seqs'));
      await writeFile(file, '{ nope');
      await assert.rejects(runServe({ ...CLI_DEFAULTS, config: file }, signal), (e: unknown) => e instanceof ConfigError && e.message.includes(file));
      await assert.rejects(runServe({ ...CLI_DEFAULTS, config: join(dir, 'missing.json') }, signal), (e: unknown) => e instanceof ConfigError && e.message.includes('missing.json'));
      await writeFile(file, JSON.stringify({ max_num_seqs: 4, step_base_ms: 0.5 }));
      await runServe({ ...CLI_DEFAULTS, config: file }, signal, () => undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('registers `serve` with its flags and defaults', () => {
    const program = new Command();
    registerServeCommand(program);
    const serve = program.commands.find((c) => c.name() === 'serve')!;
    const flags = serve.options.map((o) => o.long);
    for (const f of ['--host', '--port', '--profile', '--config', '--tokenizer', '--seed', '--faults', '--trace', '--model-name']) assert.ok(flags.includes(f), f);
    const defaults = Object.fromEntries(serve.options.map((o) => [o.attributeName(), o.defaultValue as unknown]));
    assert.equal(defaults.port, 8000);
    assert.equal(defaults.profile, 'h100-8b');
    assert.equal(defaults.host, '127.0.0.1');
  });
});
