import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ExpectedCache, type ExpectedCacheConfig, type ExpectedCacheTicket } from '../../src/cache-model/expected-cache.js';
import { defaultTokenCounter, type ChatMessage } from '../../src/tokenizer/index.js';
import { filler } from '../helpers/datasets.js';

// Each miss cause of issue #30 produced on purpose against the expected-cache model itself: the requests a run would
// make, with the server's cached count chosen to be what a server with that behaviour reports; each test checks the
// cause and the missed tokens.

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

/** One request of `key`'s conversation: sent, its first token at `atMs`, settled (not ended). */
async function request(model: ExpectedCache, key: object, messages: ChatMessage[], atMs: number): Promise<ExpectedCacheTicket> {
  const ticket = await model.begin(key, messages, 16);
  model.prefilled(ticket, atMs);
  await model.settled(ticket);
  return ticket;
}

function cacheModel(config: Partial<ExpectedCacheConfig> = {}): ExpectedCache {
  return new ExpectedCache(defaultTokenCounter, { blockSize: 16, sliceMs: Infinity, ...config });
}

/** A conversation's first turn answered with `answer`, then its second turn's request (first token 100 ms later). */
async function secondTurn(model: ExpectedCache, answer: string): Promise<{ first: ExpectedCacheTicket; second: ExpectedCacheTicket }> {
  const key = {};
  const u1 = user(filler(200, 1));
  const first = await request(model, key, [u1], 0);
  await model.end(first, { text: answer, reasoning: false, finishReason: 'stop' });
  const second = await request(model, key, [u1, assistant(answer), user(filler(30, 2))], 100);
  return { first, second };
}

describe('why the server cached less than expected: one cause per request (issue #30)', () => {
  test('history_resent: the hit stops inside the previous answer (its generated ids differ from the text sent back)', async () => {
    const model = cacheModel();
    const { first, second } = await secondTurn(model, filler(80, 3));
    assert.ok(second.hit.expected > first.promptLength, 'the model expects the answer to hit');
    const cached = first.promptLength + 5;
    const account = model.account(second, cached);
    assert.deepEqual(account, { warmStartTokens: 0, missedTokens: second.hit.expected - cached, missCause: 'history_resent' });
  });

  test('reasoning_not_sent_back: the previous answer carried <think> in its content, which the template dropped', async () => {
    const model = cacheModel();
    const { first, second } = await secondTurn(model, `<think>${filler(60, 4)}</think> ${filler(20, 5)}`);
    const cached = Math.floor(first.promptLength / 16) * 16;
    const account = model.account(second, cached);
    assert.equal(account.missCause, 'reasoning_not_sent_back');
    assert.equal(account.missedTokens, second.hit.expected - cached);
  });

  test('concurrency: the hit the model saw appeared after the send (another request prefilled meanwhile)', async () => {
    const model = cacheModel();
    const system: ChatMessage = { role: 'system', content: filler(400, 6) };
    const [a, b] = [{}, {}];
    // Both sent before either computed anything; b's first token comes 10 ms after a's, past the same-step window.
    const ta = await model.begin(a, [system, user('first question')], 16);
    const tb = await model.begin(b, [system, user('second question')], 16);
    model.prefilled(ta, 0);
    model.prefilled(tb, 10);
    await model.settled(tb);
    assert.ok(tb.hit.expected >= 384, `the model expects b to hit a's system prompt: ${tb.hit.expected}`);
    assert.equal(tb.atSend, 0, 'nothing was cached at the send');
    assert.deepEqual(model.account(tb, 0), { warmStartTokens: 0, missedTokens: tb.hit.expected, missCause: 'concurrency' });
  });

  test('block_rounding: the server caches in 64-token pages, the model in 16-token blocks', async () => {
    const model = cacheModel();
    const { second } = await secondTurn(model, filler(80, 7));
    // Four hits agree on 64-token pages before the one that rounds.
    for (const cached of [64, 128, 192, 320]) model.account(second, cached);
    const cached = Math.floor(second.hit.expected / 64) * 64;
    assert.ok(cached < second.hit.expected, 'the expected hit is not a whole number of pages');
    assert.equal(model.account(second, cached).missCause, 'block_rounding');
  });

  test('capacity_eviction: a cache a quarter smaller would have evicted what the server missed', async () => {
    // The conversation's 2nd turn finds its first turn (~20 blocks) in a 60-block cache after ~36 blocks of other
    // traffic: held in 60 blocks, partly evicted from 45.
    const model = cacheModel({ capacityBlocks: 60 });
    const key = {};
    const u1 = user(filler(150, 8));
    const first = await request(model, key, [u1], 0);
    await model.end(first, undefined);
    const other = await request(model, {}, [user(filler(280, 9))], 50);
    await model.end(other, undefined);
    const second = await request(model, key, [u1, assistant('ok'), user('more')], 100);
    assert.ok(second.hit.expected > 0 && second.smaller! < second.hit.expected, `held by the model (${second.hit.expected}), evicted from the smaller cache (${second.smaller})`);
    assert.equal(model.account(second, 0).missCause, 'capacity_eviction');
  });

  test("slot_choice: llama.cpp's one slot, taken by another conversation sharing the system prompt, kept half its tokens: no restore", async () => {
    // sharedFrom 'end' with slots: llama.cpp's semantics, its slots followed (llamacpp-slots.ts).
    for (const slots of [1, undefined]) {
      const model = cacheModel({ blockSize: 1, sharedFrom: 'end', slots });
      const system = filler(300, 11);
      const [a, b] = [{}, {}];
      const a1 = [user(`${system} ${filler(20, 12)}`)];
      const first = await request(model, a, a1, 0);
      await model.end(first, { text: filler(20, 13), reasoning: false, finishReason: 'stop' });
      // B's prompt shares the system prompt with the slot, which keeps over half its tokens: reused as it is.
      const other = await request(model, b, [user(`${system} ${filler(20, 14)}`)], 10);
      await model.end(other, { text: filler(20, 15), reasoning: false, finishReason: 'stop' });
      const second = await request(model, a, [...a1, assistant(filler(20, 13)), user(filler(20, 16))], 20);
      assert.ok(second.hit.expected > first.promptLength, 'the one ideal cache holds A\'s history');
      if (slots === undefined) {
        assert.equal(second.slotHit, undefined, 'no slots: not followed');
        assert.equal(model.account(second, 250).missCause, 'unexplained');
        continue;
      }
      assert.ok(other.slotHit! > 250 && other.slotHit! < first.promptLength, `B reused the system prompt from A's slot: ${other.slotHit}`);
      assert.ok(second.slotHit! > 250 && second.slotHit! < first.promptLength, `A's turn 2 reused only the system prompt from B's slot: ${second.slotHit}`);
      assert.deepEqual(model.account(second, second.slotHit!), { warmStartTokens: 0, missedTokens: second.hit.expected - second.slotHit!, missCause: 'slot_choice' });
    }
  });

  test('unexplained: the server missed what the model held with room to spare, at the send, outside any answer', async () => {
    const model = cacheModel();
    const key = {};
    const u1 = user(filler(300, 10));
    const first = await request(model, key, [u1], 0);
    await model.end(first, undefined);
    const second = await request(model, key, [u1, assistant('ok'), user('more')], 100);
    assert.ok(second.hit.expected >= 288);
    assert.deepEqual(model.account(second, 0), { warmStartTokens: 0, missedTokens: second.hit.expected, missCause: 'unexplained' });
  });

  test('warm start: cached beyond anything the run sent (a block or more) is warm, and no miss', async () => {
    const model = cacheModel();
    const ticket = await request(model, {}, [user(filler(300, 11))], 0);
    assert.equal(ticket.hit.expected, 0);
    assert.deepEqual(model.account(ticket, 288), { warmStartTokens: 288, missedTokens: 0, missCause: null });
    // Under a block past what the run explains is rounding between the model's blocks and the server's, not warmth.
    assert.equal(model.account(ticket, 15).warmStartTokens, 0);
  });

  test('warm start: a prompt another request still has in flight was sent by the run, so its hit there is not warm', async () => {
    const model = cacheModel();
    const messages = [user(filler(300, 12))];
    // Both sent before either is prefilled, both prefilled in one step: neither hits the other in the model.
    const first = await model.begin({}, messages, 16);
    const second = await model.begin({}, messages, 16);
    model.prefilled(first, 0);
    model.prefilled(second, 0);
    await Promise.all([model.settled(first), model.settled(second)]);
    assert.equal(second.hit.infinite, 0);
    assert.deepEqual(model.account(second, 288), { warmStartTokens: 0, missedTokens: 0, missCause: null });
  });
});
