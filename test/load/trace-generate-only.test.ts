// `run -i TRACE --generate-only` writes the prompts a replay sends (issue #34: every user message was empty, the
// prompts being made only at send time). The written file loads as a dataset, and its first prompt is byte for byte
// the first request a replay of the trace sends to a (recording) server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { writeRunDataset } from '../../src/benchmark/run-dataset.js';
import { loadDataset } from '../../src/conversation/load.js';
import { planRun } from '../../src/options/run-plan.js';
import { MODELS_RESPONSE, SHORT_ANSWER, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';
import { writeMooncakeTrace } from '../helpers/traces.js';

test('--generate-only on a Mooncake trace writes the prompts the replay sends, with each turn\'s max_tokens', { timeout: 60_000 }, async () => {
  const dir = tempDir('trace-generate-only');
  const trace = writeMooncakeTrace(dir, { rows: 6, blockSize: 16, gapMs: 5, sessionEvery: 3, turns: 2, seed: 4 });
  const out = join(dir, 'prompts.json');
  await writeRunDataset(planRun({ inputFile: trace, outputFile: out, generateOnly: true, seed: 7 }), () => {});
  const written = JSON.parse(readFileSync(out, 'utf8')) as Array<{ id: string; messages: Array<{ role: string; content: string; max_tokens?: number }> }>;
  const users = written.flatMap((c) => c.messages.filter((m) => m.role === 'user'));
  assert.ok(users.length > 0 && users.every((m) => m.content.length > 0), 'every prompt has its text');
  assert.ok(written.flatMap((c) => c.messages.filter((m) => m.role === 'assistant')).every((m) => typeof m.max_tokens === 'number' && m.max_tokens > 0), 'each turn keeps its output_length as max_tokens');
  const loaded = await loadDataset(out);
  assert.equal(loaded.conversations.length, written.length, 'the file loads as a dataset');

  const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : SHORT_ANSWER));
  try {
    await runBenchmark({ url: server.url, inputFile: trace, seed: 7, outputDir: join(dir, 'replay'), maxNumRequests: 1, maxConcurrency: 1 });
    const first = server.requests.find((r) => r.method === 'POST')!;
    const sent = (JSON.parse(first.body) as { messages: Array<{ role: string; content: string }> }).messages.at(-1)!.content;
    assert.equal(sent, written[0]!.messages[0]!.content, 'the first prompt is the one the replay sent');
  } finally {
    await server.close();
  }
});
