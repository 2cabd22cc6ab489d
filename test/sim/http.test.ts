import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { approxTokenizer, defaultTokenCounter, encodePrompt, type ChatMessage } from '../../src/tokenizer/index.js';
import { metricValue, openStream, raw, sseEvents, waitFor } from './sim-http.js';

const MODEL = 'chatload-sim';

interface ChatJson {
  choices: { message: { content: string }; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details: { cached_tokens: number } };
}

async function chat(sim: RunningSimulator, messages: ChatMessage[], maxTokens: number, model = MODEL): Promise<ChatJson> {
  const res = await raw(sim.url, '/v1/chat/completions', { model, messages, max_tokens: maxTokens });
  assert.equal(res.status, 200, res.body);
  return JSON.parse(res.body) as ChatJson;
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

const LONG_USER = 'Please rewrite the following text and add more content: ' + 'It was the best of times, it was the worst of times. '.repeat(12);

describe('simulator over HTTP', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny' });
  });
  after(async () => {
    await sim.close();
  });

  test('the official openai SDK streams a chat completion with usage', { timeout: 10_000 }, async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 5000 });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say something.' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 12,
    });
    let content = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    let roleSeen = false;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      if (choice.delta.role === 'assistant') roleSeen = true;
      content += choice.delta.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
    assert.ok(roleSeen);
    assert.equal(finish, 'length');
    assert.ok(usage !== undefined);
    assert.equal(usage.completion_tokens, 12);
    assert.equal(approxTokenizer.count(content), 12);
    assert.equal(usage.prompt_tokens, encodePrompt(defaultTokenCounter, [{ role: 'user', content: 'Say something.' }]).length);
    assert.equal(usage.total_tokens, usage.prompt_tokens + 12);
    assert.equal(usage.prompt_tokens_details?.cached_tokens, 0);
  });

  test('two turns: turn 2 reports the block-aligned shared prefix as cached; after /reset_prefix_cache it reports 0', { timeout: 10_000 }, async () => {
    const turn1: ChatMessage[] = [{ role: 'user', content: LONG_USER }];
    const r1 = await chat(sim, turn1, 37);
    const answer = r1.choices[0]!.message.content;
    const generatedIds = approxTokenizer.encode(answer);
    assert.equal(generatedIds.length, r1.usage.completion_tokens);
    const turn2: ChatMessage[] = [...turn1, { role: 'assistant', content: answer }, { role: 'user', content: 'Now shorter, please.' }];
    const p1 = encodePrompt(defaultTokenCounter, turn1);
    const p2 = encodePrompt(defaultTokenCounter, turn2);
    const shared = commonPrefix([...p1, ...generatedIds], p2);
    const expected = Math.min(Math.floor(shared / 16) * 16, Math.floor((p2.length - 1) / 16) * 16);
    assert.ok(expected > p1.length - 16, `the answer is part of the cached prefix (${expected})`);
    const r2 = await chat(sim, turn2, 5);
    assert.equal(r2.usage.prompt_tokens, p2.length);
    assert.equal(r2.usage.prompt_tokens_details.cached_tokens, expected);
    const reset = await raw(sim.url, '/reset_prefix_cache', {});
    assert.equal(reset.status, 200);
    const r3 = await chat(sim, turn2, 5);
    assert.equal(r3.usage.prompt_tokens_details.cached_tokens, 0);
  });

  test('non-streaming and /v1/completions (streaming and not) answer in the OpenAI shapes', { timeout: 10_000 }, async () => {
    const r = await chat(sim, [{ role: 'user', content: 'hi' }], 4);
    assert.equal(r.choices[0]!.finish_reason, 'length');
    assert.equal(r.usage.completion_tokens, 4);
    const plain = await raw(sim.url, '/v1/completions', { model: MODEL, prompt: 'Once upon a time', max_tokens: 3 });
    const body = JSON.parse(plain.body) as { object: string; choices: { text: string }[]; usage: { prompt_tokens: number } };
    assert.equal(body.object, 'text_completion');
    assert.equal(approxTokenizer.count(body.choices[0]!.text), 3);
    assert.equal(body.usage.prompt_tokens, approxTokenizer.count('Once upon a time'));
    const streamed = await raw(sim.url, '/v1/completions', { prompt: 'Once upon a time', max_tokens: 3, stream: true });
    const events = sseEvents(streamed.body);
    assert.equal(events.length, 4);
    assert.equal(events.at(-1), '[DONE]');
    assert.equal(streamed.headers['content-type'], 'text/event-stream; charset=utf-8');
  });

  test('stream chunks: role first, one chunk per token, finish_reason on the last, usage only when asked', { timeout: 10_000 }, async () => {
    const base = { model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 3, stream: true };
    const res = await raw(sim.url, '/v1/chat/completions', { ...base, conversation_id: 'c1', extra_thing: 1 });
    const events = sseEvents(res.body) as { object: string; choices: { delta: { role?: string; content?: string }; finish_reason: string | null }[] }[];
    assert.equal(events.length, 5);
    assert.deepEqual(events[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
    assert.equal(events[0]!.object, 'chat.completion.chunk');
    assert.deepEqual(events.slice(1, 4).map((e) => e.choices[0]!.finish_reason), [null, null, 'length']);
    assert.equal(events[4], '[DONE]');
    const withUsage = sseEvents((await raw(sim.url, '/v1/chat/completions', { ...base, stream_options: { include_usage: true } })).body);
    const usageChunk = withUsage.at(-2) as { choices: unknown[]; usage: { completion_tokens: number } };
    assert.deepEqual(usageChunk.choices, []);
    assert.equal(usageChunk.usage.completion_tokens, 3);
  });

  test('bad requests get 400 in the OpenAI error shape; unknown model 404; unknown route 404', { timeout: 10_000 }, async () => {
    const cases: [unknown, string | undefined][] = [
      [{ messages: [] }, undefined],
      [{}, undefined],
      [{ messages: [{ role: 'user', content: 5 }] }, undefined],
      [{ messages: [{ role: 'wizard', content: 'x' }] }, undefined],
      [{ messages: [{ role: 'user', content: 'x' }], max_tokens: -1 }, undefined],
      [{ messages: [{ role: 'user', content: 'x' }], n: 2 }, undefined],
    ];
    for (const [body] of cases) {
      const res = await raw(sim.url, '/v1/chat/completions', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      const err = JSON.parse(res.body) as { error: { message: string; type: string; param: unknown; code: number } };
      assert.equal(err.error.type, 'BadRequestError');
      assert.equal(err.error.code, 400);
      assert.ok(err.error.message.length > 0);
    }
    const invalid = await raw(sim.url, '/v1/chat/completions', undefined, { method: 'POST', rawBody: '{"messages": [' });
    assert.equal(invalid.status, 400);
    const model = await raw(sim.url, '/v1/chat/completions', { model: 'gpt-x', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(model.status, 404);
    assert.equal((JSON.parse(model.body) as { error: { message: string } }).error.message, 'The model `gpt-x` does not exist.');
    assert.equal((await raw(sim.url, '/nope')).status, 404);
    const big = await raw(sim.url, '/v1/chat/completions', undefined, { method: 'POST', rawBody: 'x'.repeat(33 * 1024 * 1024) });
    assert.equal(big.status, 413);
    assert.equal((await raw(sim.url, '/v1/models', {})).status, 405);
  });

  test("max_model_len: vLLM's error text, with and without max_tokens", { timeout: 10_000 }, async () => {
    const messages = [{ role: 'user' as const, content: LONG_USER }];
    const promptTokens = encodePrompt(defaultTokenCounter, messages).length;
    const res = await raw(sim.url, '/v1/chat/completions', { messages, max_tokens: 8192 });
    assert.equal(res.status, 400);
    assert.equal(
      (JSON.parse(res.body) as { error: { message: string } }).error.message,
      `This model's maximum context length is 8192 tokens. However, you requested ${promptTokens + 8192} tokens (${promptTokens} in the messages, 8192 in the completion). Please reduce the length of the messages or completion.`,
    );
    const huge = [{ role: 'user' as const, content: 'word '.repeat(9000) }];
    const tooLong = await raw(sim.url, '/v1/chat/completions', { messages: huge });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.body, /maximum context length is 8192 tokens/);
  });

  test('/v1/models, /health, /version, /tokenize', { timeout: 10_000 }, async () => {
    const models = JSON.parse((await raw(sim.url, '/v1/models')).body) as { object: string; data: { id: string; object: string; owned_by: string; max_model_len: number }[] };
    assert.equal(models.object, 'list');
    assert.deepEqual(
      { id: models.data[0]!.id, object: models.data[0]!.object, owned_by: models.data[0]!.owned_by, max_model_len: models.data[0]!.max_model_len },
      { id: MODEL, object: 'model', owned_by: 'chatload', max_model_len: 8192 },
    );
    const health = await raw(sim.url, '/health');
    assert.equal(health.status, 200);
    assert.equal(health.body, '');
    assert.match((JSON.parse((await raw(sim.url, '/version')).body) as { version: string }).version, /^\d+\.\d+\.\d+/);
    const tok = JSON.parse((await raw(sim.url, '/tokenize', { model: MODEL, prompt: 'Hello world' })).body) as { count: number; tokens: number[]; max_model_len: number };
    assert.deepEqual(tok.tokens, approxTokenizer.encode('Hello world'));
    assert.equal(tok.count, tok.tokens.length);
    assert.equal(tok.max_model_len, 8192);
    const messages = [{ role: 'user' as const, content: 'Hi' }];
    const chatTok = JSON.parse((await raw(sim.url, '/tokenize', { messages })).body) as { tokens: number[] };
    assert.deepEqual(chatTok.tokens, encodePrompt(defaultTokenCounter, messages));
  });
});

describe('simulator metrics and disconnects', () => {
  test('/metrics has vLLM names and counters consistent with usage', { timeout: 15_000 }, async () => {
    const sim = await startSimulator({ modelName: 'm1' });
    try {
      const usages: ChatJson['usage'][] = [];
      const messages: ChatMessage[] = [{ role: 'user', content: LONG_USER }];
      for (let turn = 0; turn < 3; turn++) {
        const r = await chat(sim, messages, 20 + turn, 'm1');
        usages.push(r.usage);
        messages.push({ role: 'assistant', content: r.choices[0]!.message.content }, { role: 'user', content: `Turn ${turn} follow-up.` });
      }
      const text = (await raw(sim.url, '/metrics')).body;
      const l = '{model_name="m1"}';
      for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'vllm:num_preemptions_total']) {
        assert.notEqual(metricValue(text, name + l), undefined, name);
      }
      for (const name of ['vllm:time_to_first_token_seconds', 'vllm:inter_token_latency_seconds', 'vllm:e2e_request_latency_seconds']) {
        assert.equal(metricValue(text, `${name}_count${l}`), name.includes('inter_token') ? usages.reduce((s, u) => s + u.completion_tokens - 1, 0) : 3, name);
      }
      const sum = (f: (u: ChatJson['usage']) => number): number => usages.reduce((s, u) => s + f(u), 0);
      assert.equal(metricValue(text, `vllm:prompt_tokens_total${l}`), sum((u) => u.prompt_tokens));
      assert.equal(metricValue(text, `vllm:generation_tokens_total${l}`), sum((u) => u.completion_tokens));
      assert.equal(metricValue(text, `vllm:prefix_cache_queries_total${l}`), sum((u) => u.prompt_tokens));
      assert.equal(metricValue(text, `vllm:prefix_cache_hits_total${l}`), sum((u) => u.prompt_tokens_details.cached_tokens));
      assert.ok(sum((u) => u.prompt_tokens_details.cached_tokens) > 0);
      assert.equal(metricValue(text, 'vllm:request_success_total{model_name="m1",finished_reason="length"}'), 3);
      assert.notEqual(metricValue(text, 'chatload_sim_event_loop_delay_p99_seconds'), undefined);
    } finally {
      await sim.close();
    }
  });

  test('a client disconnect removes the request from the engine and frees its blocks', { timeout: 15_000 }, async () => {
    const sim = await startSimulator({ modelName: 'm2' });
    try {
      const stream = await openStream(sim.url, '/v1/chat/completions', { messages: [{ role: 'user', content: 'go on' }], max_tokens: 5000, stream: true }, 300);
      assert.equal(stream.status, 200);
      let text = (await raw(sim.url, '/metrics')).body;
      assert.equal(metricValue(text, 'vllm:num_requests_running{model_name="m2"}'), 1);
      stream.close();
      await waitFor(async () => metricValue((text = (await raw(sim.url, '/metrics')).body), 'vllm:num_requests_running{model_name="m2"}') === 0, 5000, 'running to drop to 0');
      assert.equal(metricValue(text, 'vllm:kv_cache_usage_perc{model_name="m2"}'), 0);
      assert.equal(metricValue(text, 'vllm:request_success_total{model_name="m2",finished_reason="abort"}'), 1);
    } finally {
      await sim.close();
    }
  });

  test('close() ends open streams and resolves', { timeout: 15_000 }, async () => {
    const sim = await startSimulator();
    const pending = raw(sim.url, '/v1/chat/completions', { messages: [{ role: 'user', content: 'go on' }], max_tokens: 5000, stream: true });
    await waitFor(async () => metricValue((await raw(sim.url, '/metrics')).body, 'vllm:num_requests_running{model_name="chatload-sim"}') === 1, 5000, 'the stream to run');
    await sim.close();
    const res = await pending;
    assert.ok(!res.body.includes('[DONE]'));
  });
});
