// Tests of the llama-server slot and prompt-cache test server (test/helpers/llamacpp-slots-server.ts): each expected
// number is computed from Qwen3's tokenizer and chat template (the project's loader), not written down.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadTokenizerPath } from '../../src/tokenizer/resolve.js';
import type { ChatMessage, TokenCounter } from '../../src/tokenizer/types.js';
import { startLlamacppSlotsServer, type LlamacppSlotsOptions, type LlamacppSlotsServer } from '../helpers/llamacpp-slots-server.js';
import { QWEN3_DIR } from '../helpers/tokenizers.js';

const counter: Promise<TokenCounter> = loadTokenizerPath(QWEN3_DIR, 'qwen3');

interface ChatAnswer {
  choices: { finish_reason: string; message: { content: string } }[];
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } };
  timings: { cache_n: number; prompt_n: number };
}

async function post<T>(server: LlamacppSlotsServer, path: string, body: unknown): Promise<T> {
  const res = await fetch(server.url + path, { method: 'POST', body: JSON.stringify(body) });
  return (await res.json()) as T;
}

function chat(server: LlamacppSlotsServer, messages: ChatMessage[], maxTokens: number, extra: object = {}): Promise<ChatAnswer> {
  return post<ChatAnswer>(server, '/v1/chat/completions', { model: 'qwen3-tiny', messages, max_tokens: maxTokens, ...extra });
}

/** Starts a server, runs `body`, always closes it. */
async function withServer(options: LlamacppSlotsOptions, body: (server: LlamacppSlotsServer) => Promise<void>): Promise<void> {
  const server = await startLlamacppSlotsServer(options);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

async function promptIds(messages: ChatMessage[]): Promise<number[]> {
  const { tokenizer, template } = await counter;
  return tokenizer.encode(template.apply(messages, { addGenerationPrompt: true }));
}

/** A conversation's first turn, long and distinct from the others from its first system token on. */
function opening(tag: string): ChatMessage[] {
  const words = Array.from({ length: 60 }, (_, i) => `${tag}${i}`).join(' ');
  return [
    { role: 'system', content: `${tag} ${words}` },
    { role: 'user', content: `Question ${tag}: say something.` },
  ];
}

function nextTurn(history: ChatMessage[], answer: ChatAnswer, question = 'And then?'): ChatMessage[] {
  return [...history, { role: 'assistant', content: answer.choices[0]!.message.content }, { role: 'user', content: question }];
}

test('a second turn reuses the first prompt and the answer but its last token (never decoded)', { timeout: 20_000 }, async () => {
  await withServer({}, async (server) => {
    const turn1 = opening('alpha');
    const first = await chat(server, turn1, 12);
    const ids1 = await promptIds(turn1);
    assert.equal(first.usage.prompt_tokens, ids1.length);
    assert.equal(first.choices[0]!.finish_reason, 'length');
    const answerIds = server.requests[0]!.generatedIds;
    assert.equal(answerIds.length, 12);
    // roundTrip (the default): the answer's text tokenizes back to the generated ids
    assert.deepEqual((await counter).tokenizer.encode(first.choices[0]!.message.content), answerIds);
    assert.deepEqual(server.requests[0]!.slotTokensAfter, [...ids1, ...answerIds.slice(0, -1)]);

    const turn2 = nextTurn(turn1, first);
    const second = await chat(server, turn2, 4);
    const ids2 = await promptIds(turn2);
    const expected = commonPrefix([...ids1, ...answerIds.slice(0, -1)], ids2);
    assert.equal(expected, ids1.length + answerIds.length - 1);
    assert.equal(second.timings.cache_n, expected);
    assert.equal(second.usage.prompt_tokens_details.cached_tokens, expected);
    assert.equal(second.timings.prompt_n, ids2.length - expected);
    assert.equal(server.requests[1]!.selectedBy, 'similarity');
  });
});

test('an answer that ends with EOS: EOS counts in completion_tokens, the slot keeps every answer token', { timeout: 20_000 }, async () => {
  await withServer({ answerTokens: 5 }, async (server) => {
    const turn1 = opening('beta');
    const first = await chat(server, turn1, 20);
    assert.equal(first.choices[0]!.finish_reason, 'stop');
    assert.equal(first.usage.completion_tokens, 6);
    const ids1 = await promptIds(turn1);
    const second = await chat(server, nextTurn(turn1, first), 4);
    assert.equal(second.timings.cache_n, ids1.length + 5);
  });
});

test('roundTrip false: the next turn stops matching inside the previous answer, where its ids re-tokenize differently', { timeout: 20_000 }, async () => {
  await withServer({ roundTrip: false }, async (server) => {
    const turn1 = opening('gamma');
    const first = await chat(server, turn1, 12);
    const generated = server.requests[0]!.generatedIds;
    const retokenized = (await counter).tokenizer.encode(first.choices[0]!.message.content);
    const same = commonPrefix(generated, retokenized);
    assert.ok(same < generated.length - 1, `the answer should diverge before its last kept token (${same} of ${generated.length})`);
    const turn2 = nextTurn(turn1, first);
    const second = await chat(server, turn2, 4);
    const ids1 = await promptIds(turn1);
    assert.equal(second.timings.cache_n, ids1.length + same);
    assert.equal(second.timings.cache_n, commonPrefix([...ids1, ...generated.slice(0, -1)], await promptIds(turn2)));
  });
});

test('the same prompt twice: a full hit still evaluates the last prompt token', { timeout: 20_000 }, async () => {
  await withServer({}, async (server) => {
    const messages = opening('delta');
    await chat(server, messages, 3);
    const again = await chat(server, messages, 3);
    assert.equal(again.timings.cache_n, (await promptIds(messages)).length - 1);
    assert.equal(again.timings.prompt_n, 1);
  });
});

/** Runs 5 conversations' first turns one after the other on 4 slots, then A's second turn. */
async function fiveOnFour(server: LlamacppSlotsServer) {
  const tags = ['echo', 'fox', 'golf', 'hotel', 'india'];
  const firsts = [];
  for (const tag of tags) firsts.push(await chat(server, opening(tag), 8));
  const turnA2 = nextTurn(opening(tags[0]!), firsts[0]!);
  const a2 = await chat(server, turnA2, 4);
  const ids1 = await promptIds(opening(tags[0]!));
  return { a2, a2Ids: await promptIds(turnA2), keptA: [...ids1, ...server.requests[0]!.generatedIds.slice(0, -1)], record: server.requests[5]! };
}

test('5 conversations on 4 slots, no prompt cache: never-used slots go last first, then LRU evicts the first conversation', { timeout: 20_000 }, async () => {
  await withServer({ promptCache: false }, async (server) => {
    const { a2, record } = await fiveOnFour(server);
    // llama.cpp's LRU scan keeps the last slot among equal t_last_used (-1 for never used): 3, 2, 1, 0, then 3 again.
    assert.deepEqual(server.requests.slice(0, 5).map((r) => [r.slot, r.selectedBy]), [[3, 'lru'], [2, 'lru'], [1, 'lru'], [0, 'lru'], [3, 'lru']]);
    // A's slot (3) now holds the fifth conversation: A's second turn takes the least recently used slot (B's, 2)
    // and reuses only the chat template's first tokens.
    assert.equal(record.slot, 2);
    assert.equal(record.selectedBy, 'lru');
    assert.equal(record.restoredTokens, 0);
    assert.equal(a2.timings.cache_n, commonPrefix(record.slotTokensBefore, record.promptIds));
    assert.ok(a2.timings.cache_n < 5);
  });
});

test('the prompt cache gives back a prefix another slot computed (idle slots are saved when a task starts)', { timeout: 20_000 }, async () => {
  await withServer({}, async (server) => {
    const { a2, a2Ids, keptA, record } = await fiveOnFour(server);
    assert.equal(record.slot, 2);
    assert.equal(record.restoredTokens, keptA.length);
    assert.equal(a2.timings.cache_n, commonPrefix(keptA, a2Ids));
    assert.equal(a2.timings.cache_n, keptA.length);
    // B's tokens, saved when the slot was taken, are in the cache; A's entry moved into the slot.
    const entries = server.promptCacheEntries();
    assert.ok(entries.some((e) => commonPrefix(e, server.requests[1]!.slotTokensAfter!) === e.length));
    assert.ok(!entries.some((e) => commonPrefix(e, keptA) === keptA.length));
  });
});

test('a prompt cache bounded by promptCacheTokens drops its oldest entries and misses', { timeout: 20_000 }, async () => {
  await withServer({ promptCacheTokens: 300 }, async (server) => {
    const { a2, record } = await fiveOnFour(server);
    assert.equal(record.restoredTokens, 0);
    assert.equal(a2.timings.cache_n, commonPrefix(record.slotTokensBefore, record.promptIds));
    const entries = server.promptCacheEntries();
    assert.ok(entries.length === 1 || entries.reduce((n, e) => n + e.length, 0) <= 300);
  });
});

test('similarity: a conversation goes back to the slot holding it; a short prompt matches on the template header alone', { timeout: 20_000 }, async () => {
  await withServer({}, async (server) => {
    const tags = ['juliet', 'kilo', 'lima'];
    const firsts = [];
    for (const tag of tags) firsts.push(await chat(server, opening(tag), 6));
    await chat(server, nextTurn(opening('kilo'), firsts[1]!), 4);
    assert.equal(server.requests[3]!.slot, server.requests[1]!.slot);
    assert.equal(server.requests[3]!.selectedBy, 'similarity');
    // "<|im_start|>user\n" is 3 tokens: over 10% of a short prompt, so a new short conversation reuses a slot.
    await chat(server, [{ role: 'user', content: 'hi' }], 2);
    await chat(server, [{ role: 'user', content: 'yo' }], 2);
    const [hi, yo] = server.requests.slice(4);
    // even "<|im_start|>" alone (1 of 9 tokens) beats the 0.1 threshold against slots that start with a system turn
    assert.equal(hi!.selectedBy, 'similarity');
    assert.equal(hi!.cached, commonPrefix(hi!.slotTokensBefore, hi!.promptIds));
    assert.equal(yo!.selectedBy, 'similarity');
    assert.equal(yo!.slot, hi!.slot);
    assert.equal(yo!.cached, commonPrefix(await promptIds([{ role: 'user', content: 'hi' }]), yo!.promptIds));
  });
});

test('/tokenize of /apply-template\'s prompt gives the ids of the chat request (system, history, tools)', { timeout: 20_000 }, async () => {
  await withServer({}, async (server) => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'user', content: 'Thanks!' },
    ];
    const { prompt } = await post<{ prompt: string }>(server, '/apply-template', { messages, tools });
    assert.ok(prompt.includes('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'));
    const { tokens } = await post<{ tokens: number[] }>(server, '/tokenize', { content: prompt, add_special: true, parse_special: true });
    const answer = await post<ChatAnswer>(server, '/v1/chat/completions', { messages, tools, max_tokens: 2 });
    assert.equal(answer.usage.prompt_tokens, tokens.length);
    assert.deepEqual(server.requests[0]!.promptIds, tokens);
    const plain = await post<{ tokens: number[] }>(server, '/tokenize', { content: '<|im_start|>', parse_special: false });
    // parse_special false: the control token's text is tokenized as plain text (the prompt starts with the token)
    assert.ok(plain.tokens.length > 1 && !plain.tokens.includes(tokens[0]!));
    assert.equal((await counter).tokenizer.decode!(plain.tokens), '<|im_start|>');
  });
});

test('at most `slots` requests run at once; the others are deferred until a slot is released', { timeout: 20_000 }, async () => {
  await withServer({ slots: 2, delayMs: 5 }, async (server) => {
    const runs = ['mike', 'november', 'oscar', 'papa'].map((tag) => chat(server, opening(tag), 60));
    // The first two answers take 300 ms or more; wait until the four requests have arrived.
    let metrics = '';
    for (let i = 0; i < 100 && !/^llamacpp:requests_deferred 2$/m.test(metrics); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      metrics = await (await fetch(server.url + '/metrics')).text();
    }
    assert.match(metrics, /^llamacpp:requests_processing 2$/m);
    assert.match(metrics, /^llamacpp:requests_deferred 2$/m);
    // While it generates, a slot holds its prompt and every sampled token (the newest one is being decoded).
    type SlotJson = { id: number; is_processing: boolean; n_prompt_tokens: number; next_token: { n_decoded: number }[] };
    const busy = ((await (await fetch(server.url + '/slots')).json()) as SlotJson[]).filter((s) => s.is_processing);
    assert.equal(busy.length, 2);
    for (const slot of busy) {
      const running = server.requests.find((r) => r.slot === slot.id && !r.deferred)!;
      assert.equal(slot.n_prompt_tokens, running.promptIds.length + slot.next_token[0]!.n_decoded);
    }
    await Promise.all(runs);
    assert.deepEqual(server.requests.map((r) => r.deferred), [false, false, true, true]);
    const after = await (await fetch(server.url + '/metrics')).text();
    const value = (name: string) => Number(new RegExp(`^llamacpp:${name} (\\S+)$`, 'm').exec(after)![1]);
    assert.equal(value('tokens_predicted_total'), 4 * 60);
    assert.equal(value('prompt_tokens_total') + value('prompt_tokens_cached_total'), server.requests.reduce((n, r) => n + r.promptIds.length, 0));
  });
});

test('shapes: Server header, /props, /v1/models, /slots, a streamed answer with usage and timings last', { timeout: 20_000 }, async () => {
  await withServer({ slots: 3, nCtx: 2048 }, async (server) => {
    const props = await fetch(server.url + '/props');
    assert.equal(props.headers.get('server'), 'llama.cpp');
    const p = (await props.json()) as { total_slots: number; default_generation_settings: { n_ctx: number }; build_info: string };
    assert.equal(p.total_slots, 3);
    assert.equal(p.default_generation_settings.n_ctx, 2048);
    const models = (await (await fetch(server.url + '/v1/models')).json()) as { data: { id: string; owned_by: string }[] };
    assert.deepEqual(models.data.map((m) => [m.id, m.owned_by]), [['qwen3-tiny', 'llamacpp']]);
    const messages: ChatMessage[] = [{ role: 'user', content: 'Stream please.' }];
    const res = await fetch(server.url + '/v1/chat/completions', { method: 'POST', body: JSON.stringify({ messages, max_tokens: 3, stream: true, stream_options: { include_usage: true } }) });
    const events = (await res.text()).split('\n\n').filter((e) => e !== '').map((e) => e.slice('data: '.length));
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { choices: { finish_reason: string | null }[]; usage?: ChatAnswer['usage']; timings?: object });
    assert.equal(chunks.length, 1 + 3 + 2);
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'length');
    assert.deepEqual(chunks.at(-1)!.choices, []);
    assert.equal(chunks.at(-1)!.usage!.prompt_tokens, (await promptIds(messages)).length);
    assert.ok(chunks.at(-1)!.timings !== undefined);
    const slots = (await (await fetch(server.url + '/slots')).json()) as { id: number; n_prompt_tokens?: number }[];
    assert.equal(slots.length, 3);
    assert.equal(slots.find((s) => s.id === server.requests[0]!.slot)!.n_prompt_tokens, server.requests[0]!.promptIds.length + 2);
  });
});

test('a prompt of n_ctx tokens or more is refused with exceed_context_size_error', { timeout: 20_000 }, async () => {
  await withServer({ nCtx: 64 }, async (server) => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'word '.repeat(80) }];
    const res = await fetch(server.url + '/v1/chat/completions', { method: 'POST', body: JSON.stringify({ messages, max_tokens: 2 }) });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { type: string; n_prompt_tokens: number; n_ctx: number } };
    assert.equal(body.error.type, 'exceed_context_size_error');
    assert.equal(body.error.n_prompt_tokens, (await promptIds(messages)).length);
    assert.equal(body.error.n_ctx, 64);
  });
});
