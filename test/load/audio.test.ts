// Audio parts (OpenAI's chat `input_audio`) from a dataset file to the server: sent byte for byte, counted by the
// simulator by duration and cached as a shared prefix, refused by the endpoints that cannot carry them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { startSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { encodeWav, sineSamples } from '../../src/synth/wav.js';
import { syntheticConversations, writeDataset } from '../helpers/datasets.js';
import { runCli } from '../helpers/cli.js';
import { MODELS_RESPONSE, SHORT_ANSWER, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

const RUN_TIMEOUT = { timeout: 60_000 };
const MODEL = 'chatload-sim';

/** `seconds` of a tone at `hz` as base64 16 kHz WAV. */
const wav = (hz: number, seconds: number): string => encodeWav(sineSamples(hz, seconds, 16000), 16000).toString('base64');

/** `conversations` with `audio` (base64 WAV) before the text of each conversation's first user message. */
function withAudio(conversations: ReturnType<typeof syntheticConversations>, audio: string): unknown[] {
  return conversations.map((c) => ({
    ...c,
    messages: c.messages.map((m, i) => (i === 0 ? { ...m, content: [{ type: 'input_audio', input_audio: { data: audio, format: 'wav' } }, { type: 'text', text: m.content }] } : m)),
  }));
}

/** POSTs `body` to the simulator's chat endpoint and returns its usage. */
async function chatUsage(url: string, content: unknown): Promise<{ prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content }] }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return (JSON.parse(text) as { usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } } }).usage;
}

describe('audio parts from a dataset to the server', () => {
  test('the request body carries each input_audio part exactly as the dataset has it, in its place', RUN_TIMEOUT, async () => {
    const server = await startScriptedServer((request) => (request.url === '/v1/models' ? MODELS_RESPONSE : SHORT_ANSWER));
    const dir = tempDir('audio-body');
    try {
      const audio = wav(440, 0.5);
      const inputFile = writeDataset(dir, withAudio(syntheticConversations({ count: 1, userTurns: () => 2, prefixWords: 20 }), audio));
      const result = await runBenchmark({ url: server.url, inputFile, numClients: 1, outputDir: dir, endpoint: 'chat' });
      assert.equal(result.summary.completed, 2, JSON.stringify(result.topErrors));
      const bodies = server.requests.filter((r) => r.url === '/v1/chat/completions').map((r) => JSON.parse(r.body) as { messages: Array<{ content: unknown }> });
      assert.equal(bodies.length, 2);
      for (const body of bodies) {
        const parts = body.messages[0]!.content as Array<{ type: string; input_audio?: { data: string; format: string } }>;
        assert.equal(parts[0]!.type, 'input_audio');
        assert.deepEqual(parts[0]!.input_audio, { data: audio, format: 'wav' }, 'the audio reached the server unchanged, on every turn');
        assert.equal(parts[1]!.type, 'text');
      }
      assert.ok(result.warnings.some((w) => /1 audio parts: local token counts leave audio out/.test(w)), JSON.stringify(result.warnings));
      const results = JSON.parse(readFileSync(result.files.results, 'utf8')) as { dataset_audio_parts: number; dataset_image_parts: number };
      assert.equal(results.dataset_audio_parts, 1);
      assert.equal(results.dataset_image_parts, 0);
    } finally {
      await server.close();
    }
  });

  test('the simulator counts audio by duration and caches it; responses and completions refuse audio', RUN_TIMEOUT, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny', config: { tokens_per_audio_second: 50 } });
    const dir = tempDir('audio-sim');
    try {
      const text = { type: 'text', text: 'what is this sound?' };
      const plain = await chatUsage(sim.url, [text]);
      // 2 s at 50 tokens a second: 100 more prompt tokens (give or take the text split around the audio's place).
      const two = await chatUsage(sim.url, [{ type: 'input_audio', input_audio: { data: wav(300, 2), format: 'wav' } }, text]);
      assert.ok(Math.abs(two.prompt_tokens - (plain.prompt_tokens + 100)) <= 2, `${two.prompt_tokens} vs ${plain.prompt_tokens} + 100`);
      const four = await chatUsage(sim.url, [{ type: 'input_audio', input_audio: { data: wav(300, 4), format: 'wav' } }, text]);
      assert.equal(four.prompt_tokens - two.prompt_tokens, 100, 'two more seconds, 100 more tokens');
      // The same audio again is a cached prefix (to the block); another tone of the same length is not.
      const same = await chatUsage(sim.url, [{ type: 'input_audio', input_audio: { data: wav(300, 4), format: 'wav' } }, text]);
      assert.ok(same.prompt_tokens_details!.cached_tokens >= 200, JSON.stringify(same));
      const other = await chatUsage(sim.url, [{ type: 'input_audio', input_audio: { data: wav(301, 4), format: 'wav' } }, text]);
      assert.ok(other.prompt_tokens_details!.cached_tokens < 16, JSON.stringify(other));

      const conversations = withAudio(syntheticConversations({ count: 2, userTurns: () => 3, prefixWords: 100 }), wav(500, 1));
      const inputFile = writeDataset(dir, conversations);
      const result = await runBenchmark({ url: sim.url, inputFile, numClients: 1, outputDir: join(dir, 'chat'), endpoint: 'chat', earlyStop: false });
      assert.equal(result.summary.failed, 0, JSON.stringify(result.topErrors));
      const records = readRequestsJsonl(result.files.requests);
      for (const r of records.filter((x) => x.turn > 1)) assert.ok(r.cached_tokens! >= r.expected_cached_tokens - 16, 'the audio is part of the cached prefix');
      for (const endpoint of ['responses', 'completions'] as const) {
        await assert.rejects(runBenchmark({ url: sim.url, inputFile, numClients: 1, outputDir: join(dir, endpoint), endpoint }), new RegExp(`2 audio parts, which --endpoint ${endpoint} cannot send`));
      }
    } finally {
      await sim.close();
    }
  });

  test('the simulator answers an unreadable or unknown-format audio part with a 400 naming it', RUN_TIMEOUT, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny' });
    try {
      for (const [inputAudio, pattern] of [
        [{ data: wav(300, 1), format: 'flac' }, /content\[0\] must be an audio part/],
        [{ data: Buffer.from('not a wav file at all').toString('base64'), format: 'wav' }, /content\[0\]: the audio cannot be read: not a WAV file/],
      ] as const) {
        const response = await fetch(`${sim.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: inputAudio }] }] }),
        });
        assert.equal(response.status, 400);
        assert.match(await response.text(), pattern);
      }
    } finally {
      await sim.close();
    }
  });

  test('terminal output and records show a placeholder, never the audio: --print-content, -v, a server error quoting the part', RUN_TIMEOUT, async () => {
    const audio = wav(440, 0.5);
    // A vLLM-style 400 whose message prints the offending part as a Python repr, base64 and all.
    let chats = 0;
    const server = await startScriptedServer((request) => {
      if (request.method === 'GET') return MODELS_RESPONSE;
      chats += 1;
      if (chats === 1) return SHORT_ANSWER;
      const message = `1 validation error: {'type': 'input_audio', 'input_audio': {'data': '${audio}', 'format': 'wav'}} is not supported`;
      return { status: 400, headers: { 'content-type': 'application/json' }, actions: [{ write: JSON.stringify({ error: { message, type: 'BadRequestError' } }) }, { end: true }] };
    });
    const dir = tempDir('audio-terminal');
    try {
      const inputFile = writeDataset(dir, withAudio(syntheticConversations({ count: 2, userTurns: () => 1, prefixWords: 5 }), audio));
      const outputDir = join(dir, 'out');
      const result = await runCli(['run', '-u', server.url, '-i', inputFile, '-p', '1', '--max-retries', '0', '--no-early-stop', '--output-dir', outputDir, '-v', '--print-content']);
      const out = result.stdout + result.stderr;
      const sample = audio.slice(100, 140);
      assert.ok(!out.includes(sample), 'no audio bytes on the terminal');
      assert.match(out, /user: \[audio wav 0\.5 s\]/, out);
      assert.match(out, /\[audio data\]/, 'the failed request\'s line shows the server\'s error without the bytes');
      const requests = readFileSync(join(outputDir, 'requests.jsonl'), 'utf8');
      assert.ok(!requests.includes(sample), 'no audio bytes in the records');
      assert.match(requests, /'data': '\[audio data\]'/);
    } finally {
      await server.close();
    }
  });
});
