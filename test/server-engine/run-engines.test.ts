// Whole runs against each engine's test server: the engine in results.json, the server's prefix-cache hit rate from
// its own /metrics counter deltas, the one warning when /metrics has nothing chatload knows, and the model check.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runBenchmark, type BenchmarkResult } from '../../src/benchmark/run-benchmark.js';
import type { RunOptionsInput } from '../../src/options/run-options.js';
import { runCliBatch } from '../helpers/cli-batch.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import type { EngineServer } from '../helpers/engine-server-core.js';
import { startLlamaCppServer, startProxyServer, startSglangServer, startTgiServer, startVllmServer } from '../helpers/engine-servers.js';
import { tempDir } from '../helpers/tmp.js';

/** Runs 2 conversations x 2 turns against `server` with --scrape-metrics and --reset-prefix-cache, then closes it. */
async function runAgainst(server: EngineServer, label: string, extra: RunOptionsInput = {}): Promise<{ result: BenchmarkResult; results: Record<string, unknown> }> {
  const dir = tempDir(`engine-${label}`);
  try {
    const result = await runBenchmark({
      url: server.url,
      inputFile: writeSyntheticDataset(dir, 2, 2),
      earlyStop: false,
      scrapeMetrics: true,
      scrapeIntervalSec: 0.2,
      resetPrefixCache: true,
      outputDir: join(dir, 'out'),
      ...extra,
    });
    return { result, results: JSON.parse(readFileSync(result.files.results, 'utf8')) as Record<string, unknown> };
  } finally {
    await server.close();
  }
}

describe('runs against each engine', () => {
  for (const [label, start, name] of [
    ['vllm', () => startVllmServer(), 'vllm'],
    ['sglang', () => startSglangServer(), 'sglang'],
    ['llamacpp', () => startLlamaCppServer(), 'llamacpp'],
  ] as const) {
    test(`${label}: detected, reset, and the server's hit rate from counter deltas equals the usage one`, { timeout: 30_000 }, async () => {
      const server = await start();
      const { result, results } = await runAgainst(server, label);
      assert.equal(result.summary.completed, 4);
      assert.equal(result.serverEngine.name, name);
      assert.deepEqual(results.engine, result.serverEngine);
      const metrics = result.serverMetrics!;
      assert.equal(metrics.engine, name);
      // 4 requests of 100 prompt tokens, 40 of them cached (the counters started from earlier traffic).
      assert.equal(metrics.prefix_cache_queries, 400);
      assert.equal(metrics.prefix_cache_hits, 160);
      assert.equal(metrics.server_cache_hit_rate, 0.4);
      assert.equal(metrics.prompt_tokens, 400);
      assert.equal(metrics.generation_tokens, 8);
      assert.equal(metrics.warning, null);
      assert.equal(result.summary.cache_hit_ratio, 0.4, 'the responses said the same');
      assert.deepEqual(result.warnings.filter((w) => /--scrape-metrics|--reset-prefix-cache/.test(w)), []);
      // The readiness check's answer is the one detection reads: the server is asked for its models once.
      assert.equal(server.requests.filter((r) => r.method === 'GET' && r.url === '/v1/models').length, 1);
    });
  }

  for (const [label, start, flag] of [
    ['vLLM', () => startVllmServer({ reportCached: false }), '--enable-prompt-tokens-details'],
    ['SGLang', () => startSglangServer({ reportCached: false }), '--enable-cache-report'],
  ] as const) {
    test(`${label} without cached tokens in its usage (its default): one warning naming the server flag that turns them on`, { timeout: 30_000 }, async () => {
      const { result } = await runAgainst(await start(), `no-cached-${label}`);
      assert.equal(result.summary.cached_tokens_known, 0);
      const said = result.warnings.filter((w) => w.includes('no answer said how many of its prompt tokens came from the prefix cache'));
      assert.equal(said.length, 1, result.warnings.join('\n'));
      assert.ok(said[0]!.includes(`start the server with ${flag}`), said[0]);
    });
  }

  test('TGI: no prefix-cache counter (one warning), token counts from histogram sums, no reset (a warning naming TGI)', { timeout: 30_000 }, async () => {
    const { result } = await runAgainst(await startTgiServer(), 'tgi');
    assert.equal(result.serverEngine.name, 'tgi');
    const metrics = result.serverMetrics!;
    assert.equal(metrics.server_cache_hit_rate, null);
    assert.equal(metrics.prompt_tokens, 400);
    assert.equal(metrics.generation_tokens, 8);
    const scrape = result.warnings.filter((w) => w.startsWith('--scrape-metrics'));
    assert.equal(scrape.length, 1);
    assert.match(scrape[0]!, /has no prefix-cache counters for TGI/);
    assert.ok(result.warnings.some((w) => /^--reset-prefix-cache: could not empty the prefix cache of TGI \(TGI has no endpoint/.test(w)), result.warnings.join('\n'));
  });

  test('a page with no metric chatload knows, or no page at all: one warning each, saying what was seen', { timeout: 30_000 }, async () => {
    const proxy = await runAgainst(await startProxyServer(), 'proxy');
    assert.equal(proxy.result.serverEngine.name, 'unknown');
    const unknown = proxy.result.warnings.filter((w) => w.startsWith('--scrape-metrics'));
    assert.equal(unknown.length, 1);
    assert.match(unknown[0]!, /answered but has no metric chatload knows for the server \(engine not identified\) \(saw prefixes process_ python_\)/);
    assert.ok(proxy.result.warnings.some((w) => /could not empty the prefix cache of the server \(engine not identified\)/.test(w)));

    const bare = await runAgainst(await startLlamaCppServer({ metrics: false }), 'llamacpp-bare');
    const failed = bare.result.warnings.filter((w) => w.startsWith('--scrape-metrics'));
    assert.equal(failed.length, 1);
    assert.match(failed[0]!, /every GET http:\/\/127\.0\.0\.1:\d+\/metrics failed \(\d+ tr(?:y|ies); last: HTTP 501\)/);
  });

  test('TGI answers any model name with its own: a name it does not list is a warning, not an error', { timeout: 30_000 }, async () => {
    const { result } = await runAgainst(await startTgiServer({ model: 'org/served' }), 'tgi-model', { model: 'org/other', resetPrefixCache: false, scrapeMetrics: false });
    assert.equal(result.summary.completed, 4);
    assert.ok(result.warnings.some((w) => /model "org\/other" \(-m\) is not listed by .*, but TGI answers any model name with its own \(org\/served\)/.test(w)));
  });

  test('the built-in simulator serves the model -m names', { timeout: 30_000 }, async () => {
    const dir = tempDir('engine-sim-model');
    const result = await runBenchmark({ model: 'org/some-model', inputFile: writeSyntheticDataset(dir, 1, 2), outputDir: dir });
    assert.equal(result.model, 'org/some-model');
    assert.equal(result.summary.completed, 2);
    assert.equal(result.summary.failed, 0);
    assert.equal(result.serverEngine.name, 'chatload-sim');
  });
});

describe('the model must exist', () => {
  test('-m or --served-model-name that the server does not list: exit 2 before any request, naming what it serves', { timeout: 60_000 }, async () => {
    const server = await startVllmServer({ model: 'org/served' });
    const dir = tempDir('engine-model-cli');
    try {
      const [byModel, byServedName] = await runCliBatch([
        ['run', '-u', server.url, '-m', 'nope', '--warmup-step', '--output-dir', join(dir, 'a')],
        ['run', '-u', `${server.url}/v1`, '--served-model-name', 'nope', '--output-dir', join(dir, 'b')],
      ]);
      // One error line (after the approximate-tokenizer warning -m nope brings), no stack trace. On a loaded machine the
      // server may take over a second to answer GET /v1/models, and the plain progress then says it is waiting: not an error.
      const errors = [byModel!, byServedName!].map((result) => {
        assert.equal(result.code, 2, result.stderr);
        const lines = result.stderr
          .trim()
          .split('\n')
          .filter((line) => !line.startsWith('chatload: warning:') && !/^chatload: waiting for \S+ to answer: /.test(line));
        assert.equal(lines.length, 1, result.stderr);
        return lines[0]!;
      });
      assert.match(errors[0]!, /^chatload: model "nope" is not served by http:\/\/127\.0\.0\.1:\d+; it serves: org\/served \(give one of them with -m, or with --served-model-name to keep -m for the tokenizer\)$/);
      assert.match(errors[1]!, /^chatload: model "nope" is not served by http:\/\/127\.0\.0\.1:\d+; it serves: org\/served \(give one of them with --served-model-name\)$/);
      assert.deepEqual(server.requests.filter((r) => r.method === 'POST'), [], 'nothing was sent');
    } finally {
      await server.close();
    }
  });
});
