import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { raw } from './sim-http.js';

const MODEL = 'chatload-sim';
const TEST_TIMEOUT = { timeout: 15_000 };
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

interface ResponseJson {
  id: string;
  status: string;
  output: { content: { text: string }[] }[];
  usage: { input_tokens: number; output_tokens: number; input_tokens_details: { cached_tokens: number } };
}

describe('simulator /v1/responses', () => {
  let sim: RunningSimulator;
  before(async () => {
    // A store of 2 responses, to see the bound; 100 tokens per image, to count them.
    sim = await startSimulator({ profile: 'cpu-tiny', config: { responses_store_size: 2, tokens_per_image: 100 } });
  });
  after(async () => {
    await sim.close();
  });

  async function respond(body: object): Promise<{ status: number; json: ResponseJson & { error?: { code: string; message: string; param: string } } }> {
    const res = await raw(sim.url, '/v1/responses', { model: MODEL, ...body });
    return { status: res.status, json: JSON.parse(res.body) as ResponseJson & { error?: { code: string; message: string; param: string } } };
  }

  test('the official openai SDK streams a response: text deltas, then response.completed with usage', TEST_TIMEOUT, async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 5000 });
    const stream = await client.responses.create({ model: MODEL, input: [{ role: 'user', content: 'Say something.' }], max_output_tokens: 5, stream: true });
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed' || event.type === 'response.incomplete') completed = event.response;
    }
    assert.equal(types[0], 'response.created');
    assert.equal(types.filter((t) => t === 'response.output_text.delta').length, 5);
    assert.equal(types.at(-1), 'response.incomplete', 'max_output_tokens reached');
    assert.equal(completed?.incomplete_details?.reason, 'max_output_tokens');
    const item = completed?.output[0];
    assert.equal(item?.type === 'message' && item.content[0]?.type === 'output_text' ? item.content[0].text : undefined, text);
    assert.equal(completed?.usage?.output_tokens, 5);
    assert.ok((completed?.usage?.input_tokens ?? 0) > 0);
  });

  test('previous_response_id continues from the stored history: the prompt grows and its prefix is cached', TEST_TIMEOUT, async () => {
    const long = 'It was the best of times, it was the worst of times. '.repeat(10);
    const first = await respond({ instructions: 'Be brief.', input: long, max_output_tokens: 8 });
    assert.equal(first.status, 200);
    const second = await respond({ input: [{ role: 'user', content: 'And then?' }], previous_response_id: first.json.id, max_output_tokens: 4 });
    assert.equal(second.status, 200, JSON.stringify(second.json));
    // The second prompt is the first prompt, its answer and the new message.
    assert.ok(second.json.usage.input_tokens > first.json.usage.input_tokens + 8);
    assert.ok(second.json.usage.input_tokens_details.cached_tokens >= 16 * Math.floor(first.json.usage.input_tokens / 16) - 16);
    // The same history sent whole gives the same prompt length.
    const whole = await respond({
      input: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: long },
        { role: 'assistant', content: first.json.output[0]!.content[0]!.text },
        { role: 'user', content: 'And then?' },
      ],
      max_output_tokens: 4,
      store: false,
    });
    assert.equal(whole.json.usage.input_tokens, second.json.usage.input_tokens);
  });

  test("an unknown previous_response_id is 400 previous_response_not_found, as OpenAI answers; store: false keeps nothing", TEST_TIMEOUT, async () => {
    const unknown = await respond({ input: 'x', previous_response_id: 'resp_never' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.error?.code, 'previous_response_not_found');
    assert.equal(unknown.json.error?.param, 'previous_response_id');
    assert.match(unknown.json.error!.message, /resp_never/);
    const unstored = await respond({ input: 'x', max_output_tokens: 2, store: false });
    assert.equal(unstored.status, 200);
    assert.equal((await respond({ input: 'y', previous_response_id: unstored.json.id })).status, 400);
  });

  test('the store is bounded: past responses_store_size the least recently used response is dropped', TEST_TIMEOUT, async () => {
    const a = await respond({ input: 'a', max_output_tokens: 2 });
    const b = await respond({ input: 'b', max_output_tokens: 2 });
    assert.equal((await respond({ input: 'c', max_output_tokens: 2, store: false, previous_response_id: a.json.id })).status, 200, 'a used: b is now the oldest');
    await respond({ input: 'd', max_output_tokens: 2 });
    assert.equal((await respond({ input: 'x', store: false, previous_response_id: b.json.id })).status, 400);
    assert.equal((await respond({ input: 'x', store: false, previous_response_id: a.json.id })).status, 200);
  });

  test('an image part counts tokens_per_image prompt tokens, in chat and in responses', TEST_TIMEOUT, async () => {
    const text = await respond({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is it?' }] }], max_output_tokens: 1, store: false });
    const image = await respond({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is it?' }, { type: 'input_image', image_url: PNG }] }], max_output_tokens: 1, store: false });
    assert.equal(image.json.usage.input_tokens, text.json.usage.input_tokens + 100);
    const chat = await raw(sim.url, '/v1/chat/completions', {
      model: MODEL,
      max_tokens: 1,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url: PNG } }] }],
    });
    assert.equal(chat.status, 200, chat.body);
    assert.equal((JSON.parse(chat.body) as { usage: { prompt_tokens: number } }).usage.prompt_tokens, image.json.usage.input_tokens);
    const bad = await raw(sim.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /content\[0\]/);
  });
});
