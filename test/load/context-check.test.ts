// Prompts past the server's max_model_len are foreseen before the run (issue #34: a Mooncake replay got 13 HTTP 400s
// with no word before). The simulator refuses a request whose prompt and max_tokens pass max_model_len with a 400, as
// vLLM does (its serving layer's context-length check); /v1/models lists max_model_len, as vLLM's does.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { startSimulator } from '../../src/sim/index.js';
import { writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i % 50}`).join(' ');

test('a dataset whose conversations pass max_model_len is warned about before the run, and the server refuses those', { timeout: 60_000 }, async () => {
  const sim = await startSimulator({ profile: 'cpu-tiny', config: { max_model_len: 400 } });
  const dir = tempDir('context-check');
  try {
    const short = (id: string): object => ({ id, messages: [{ role: 'user', content: 'hello there' }, { role: 'assistant', content: 'hi' }, { role: 'user', content: 'and again' }, { role: 'assistant', content: 'ok' }] });
    // The second turn's history passes 400 tokens by far; the first turn's does not.
    const long = (id: string): object => ({ id, messages: [{ role: 'user', content: words(150) }, { role: 'assistant', content: 'noted' }, { role: 'user', content: words(600) }, { role: 'assistant', content: 'done' }] });
    const inputFile = writeDataset(dir, [short('a'), long('b'), short('c'), long('d')]);
    const result = await runBenchmark({ url: sim.url, inputFile, numClients: 2, earlyStop: false, outputDir: join(dir, 'out'), maxErrorRate: 1 });
    const warning = result.warnings.find((w) => w.includes('max_model_len'));
    assert.match(warning ?? '', /^2 of 4 conversations reach past the server's max_model_len of 400 tokens \(2 requests; the largest needs about \d+, prompt and answer\): the server will refuse each/);
    assert.equal(result.summary.failed, 2);
    assert.equal(result.summary.failed_by_kind.http_status, 2);
  } finally {
    await sim.close();
  }
});
