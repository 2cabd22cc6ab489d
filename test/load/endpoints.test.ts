import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { encodePng } from '../../src/synth/png.js';
import { defaultTokenCounter, encodePrompt, messageText, type ContentPart } from '../../src/tokenizer/index.js';
import { syntheticConversations, writeDataset } from '../helpers/datasets.js';
import { OpenAiResponsesStream } from '../helpers/endpoint-streams.js';
import { startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

const RUN_TIMEOUT = { timeout: 60_000 };

describe('--endpoint against the simulator', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny' });
  });
  after(async () => {
    await sim.close();
  });

  for (const [endpoint, responsesState] of [['chat', 'input'], ['responses', 'input'], ['responses', 'server'], ['completions', 'input']] as const) {
    test(`${endpoint}${endpoint === 'responses' ? ` (--responses-state ${responsesState})` : ''}: every turn answered, the history cached as expected`, RUN_TIMEOUT, async () => {
      const dir = tempDir(`endpoint-${endpoint}-${responsesState}`);
      const inputFile = writeDataset(dir, syntheticConversations({ count: 4, userTurns: () => 4, prefixWords: 300 }));
      // 12 requests: no conversation is cut by -n, so every turn's history is the server's own answers.
      const result = await runBenchmark({ url: sim.url, inputFile, numClients: 2, outputDir: dir, endpoint, responsesState, earlyStop: false });
      assert.equal(result.summary.failed, 0, JSON.stringify(result.topErrors));
      assert.equal(result.summary.completed, 16);
      const records = readRequestsJsonl(result.files.requests);
      for (const r of records) {
        assert.equal(r.input_tokens_source, 'server');
        assert.ok(r.output_num_tokens > 0);
        assert.ok(r.ttft_ms !== null);
        if (r.turn > 1) {
          // The simulator and the client count with the same tokenizer and template: the whole previous prompt and
          // answer are a cached prefix, to the block (16 tokens), whichever way the history reached the server.
          assert.ok(r.cached_tokens! >= r.expected_cached_tokens - 16, `turn ${r.turn}: cached ${r.cached_tokens}, expected ${r.expected_cached_tokens}`);
          assert.ok(r.cached_tokens! <= r.input_num_tokens);
        }
      }
    });
  }

  test('completions: the prompt sent is the chat template applied, so the server counts what chat would', RUN_TIMEOUT, async () => {
    const dir = tempDir('endpoint-counts');
    const conversations = syntheticConversations({ count: 1, userTurns: () => 1, prefixWords: 50 });
    const inputFile = writeDataset(dir, conversations);
    const chat = await runBenchmark({ url: sim.url, inputFile, numClients: 1, outputDir: `${dir}/chat`, endpoint: 'chat' });
    const completions = await runBenchmark({ url: sim.url, inputFile, numClients: 1, outputDir: `${dir}/completions`, endpoint: 'completions' });
    const chatRecord = readRequestsJsonl(chat.files.requests)[0]!;
    const completionsRecord = readRequestsJsonl(completions.files.requests)[0]!;
    assert.equal(completionsRecord.input_num_tokens, chatRecord.input_num_tokens);
    assert.equal(chatRecord.input_num_tokens, encodePrompt(defaultTokenCounter, conversations[0]!.messages.slice(0, 1)).length);
  });
});

describe('--responses-state server when the server has dropped the response', () => {
  test('the turn resends the whole history at once, and the run says so once', RUN_TIMEOUT, async () => {
    // One stored response for two conversations in turn: each continues from a response the other's pushed out.
    const sim = await startSimulator({ profile: 'cpu-tiny', config: { responses_store_size: 1 } });
    const dir = tempDir('responses-dropped');
    try {
      const inputFile = writeDataset(dir, syntheticConversations({ count: 2, userTurns: () => 3, prefixWords: 50 }));
      // The live view's feed: one send per turn, the history resend included, so its in-flight count comes back to 0.
      let sends = 0;
      const result = await runBenchmark(
        { url: sim.url, inputFile, numClients: 2, outputDir: dir, endpoint: 'responses', responsesState: 'server', earlyStop: false },
        { observer: { onSend: () => void (sends += 1) } },
      );
      assert.equal(result.summary.failed, 0, JSON.stringify(result.topErrors));
      assert.equal(result.summary.completed, 6);
      assert.equal(sends, 6);
      const told = [...result.load.warnings, ...result.warnings].filter((w) => /no longer holds response resp_/.test(w));
      assert.equal(told.length, 1, JSON.stringify(told));
    } finally {
      await sim.close();
    }
  });
});

describe('a dataset with images against the simulator', () => {
  test('chat and responses send the image parts; the server counts them, local counts do not, and the run says so', RUN_TIMEOUT, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny', config: { tokens_per_image: 100 } });
    const dir = tempDir('endpoint-images');
    try {
      const base = syntheticConversations({ count: 2, userTurns: () => 3, prefixWords: 100 });
      const png = `data:image/png;base64,${encodePng(2, 2, new Uint8Array(12).fill(7)).toString('base64')}`;
      // The first user message of each conversation carries one image before its text.
      const withImages = base.map((c) => ({
        ...c,
        messages: c.messages.map((m, i) => (i === 0 ? { ...m, content: [{ type: 'image_url', image_url: { url: png } }, { type: 'text', text: m.content }] } : m)),
      }));
      const inputFile = writeDataset(dir, withImages);
      for (const endpoint of ['chat', 'responses'] as const) {
        const result = await runBenchmark({ url: sim.url, inputFile, numClients: 1, outputDir: join(dir, endpoint), endpoint, earlyStop: false });
        assert.equal(result.summary.failed, 0, JSON.stringify(result.topErrors));
        assert.ok(result.warnings.some((w) => /2 image parts: local token counts leave images out/.test(w)));
        const records = readRequestsJsonl(result.files.requests).sort((a, b) => a.turn - b.turn);
        const first = records.find((r) => r.turn === 1)!;
        const textOnly = encodePrompt(defaultTokenCounter, [{ role: 'user', content: messageText(withImages[0]!.messages[0]!.content as ContentPart[]) }]).length;
        // The server's count has the image's 100 tokens (give or take the text split around the image's place).
        assert.ok(Math.abs(first.input_num_tokens - (textOnly + 100)) <= 2, `${first.input_num_tokens} vs ${textOnly} + 100`);
        for (const r of records.filter((x) => x.turn > 1)) assert.ok(r.cached_tokens! >= r.expected_cached_tokens - 16, 'the image is part of the cached prefix');
        const results = JSON.parse(readFileSync(result.files.results, 'utf8')) as { dataset_image_parts: number };
        assert.equal(results.dataset_image_parts, 2);
      }
      await assert.rejects(runBenchmark({ url: sim.url, inputFile, numClients: 1, outputDir: join(dir, 'completions'), endpoint: 'completions' }), /--endpoint completions cannot send/);
    } finally {
      await sim.close();
    }
  });
});

describe('--responses-state server against an OpenAI-format server', () => {
  test('the first turn sends the history with store: true; later turns only the new message and previous_response_id', RUN_TIMEOUT, async () => {
    // Each response has its own id; every answer is "fine." (3 tokens), with usage as OpenAI reports it.
    let answered = 0;
    const server = await startScriptedServer((request) => {
      if (request.url !== '/v1/responses') {
        const models = JSON.stringify({ object: 'list', data: [{ id: 'gpt-4.1-mini', object: 'model' }] });
        return { status: request.url === '/v1/models' ? 200 : 404, headers: { 'content-type': 'application/json' }, actions: [{ write: models }, { end: true }] };
      }
      const index = answered++;
      const s = new OpenAiResponsesStream(`resp_${index}`);
      return { actions: [{ write: s.opening() + s.delta('fine.') + s.closing('fine.', { input: 10 * (index + 1), output: 3, cached: 0, reasoning: 0 }) }, { end: true }] };
    });
    const dir = tempDir('responses-server-state');
    try {
      const conversations = syntheticConversations({ count: 1, userTurns: () => 3, prefixWords: 20 });
      const inputFile = writeDataset(dir, conversations);
      const result = await runBenchmark({ url: server.url, inputFile, numClients: 1, outputDir: dir, endpoint: 'responses', responsesState: 'server' });
      assert.equal(result.summary.completed, 3, JSON.stringify(result.topErrors));
      const bodies = server.requests.filter((r) => r.url === '/v1/responses').map((r) => JSON.parse(r.body) as { input: Array<{ role: string; content: string }>; previous_response_id?: string; store: boolean });
      assert.equal(bodies.length, 3);
      assert.equal(bodies[0]!.previous_response_id, undefined);
      assert.equal(bodies[0]!.input.length, conversations[0]!.messages[0]!.role === 'system' ? 2 : 1);
      for (const [i, body] of bodies.entries()) {
        assert.equal(body.store, true);
        if (i === 0) continue;
        assert.equal(body.previous_response_id, `resp_${i - 1}`, 'continues from the previous answer');
        assert.equal(body.input.length, 1, 'only the new user message');
        assert.equal(body.input[0]!.role, 'user');
      }
      // The own-history figure is what the server holds: the previous prompt and answer, as the server counted them.
      // (This scripted server's token counts are made up, so the global model's block figure is not checked here.)
      const records = readRequestsJsonl(result.files.requests).sort((a, b) => a.turn - b.turn);
      assert.equal(records[1]!.expected_cached_tokens_own_history, records[0]!.input_num_tokens + 3);
      assert.equal(records[1]!.input_num_tokens, 20);
    } finally {
      await server.close();
    }
  });
});
