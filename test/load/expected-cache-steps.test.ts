import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExpectedCache, type ExpectedCacheConfig, type ExpectedCacheTicket } from '../../src/cache-model/expected-cache.js';
import { defaultTokenCounter, type ChatMessage } from '../../src/tokenizer/index.js';

/*
 * The expected-cache model registers, looks up and releases a large prompt's blocks in steps with the event loop let
 * go between them (issue #14), operations called meanwhile waiting their turn. Its figures must not depend on that:
 * the same requests give the same hits, evictions and cached blocks whether every operation runs whole at its call
 * or in steps of 3 blocks with the loop let go after each.
 */

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'river', 'stone', 'cloud', 'maple', 'orbit', 'lantern'];
function text(words: number, seed: number): string {
  return Array.from({ length: words }, (_, i) => WORDS[(i * 7 + seed * 13 + ((i * seed) % 11)) % WORDS.length]).join(' ');
}

interface Figures {
  hits: Array<{ expected: number; infinite: number }>;
  evictions: number[];
  cachedBlocks: number[];
  /** Requests whose lookup or release waited (the steps were really taken apart). */
  waited: number;
}

/**
 * Four conversations sharing a large system prompt (~1,200 blocks of 16 tokens) take turns in rounds; in each round
 * every request is prefilled, then every one ends, without waiting for the model between calls (as concurrent
 * sessions do), with a capacity that makes it evict.
 */
async function replay(config: ExpectedCacheConfig): Promise<Figures> {
  const model = new ExpectedCache(defaultTokenCounter, config);
  const system: ChatMessage = { role: 'system', content: text(10_000, 1) };
  const histories = [0, 1, 2, 3].map((c) => ({ key: {}, messages: [system, { role: 'user' as const, content: `${text(40 + c * 300, c + 2)}` }] }));
  const figures: Figures = { hits: [], evictions: [], cachedBlocks: [], waited: 0 };
  let atMs = 0;
  for (let round = 0; round < 3; round++) {
    const tickets: ExpectedCacheTicket[] = [];
    for (const h of histories) tickets.push(await model.begin(h.key, h.messages, 32));
    // Pairs of first tokens come in one engine step (within SAME_STEP_MS of each other). In the last round the first
    // request gets no first token (as an unstreamed one): its end looks it up.
    tickets.forEach((t, i) => {
      atMs += i % 2 === 0 ? 10 : 1;
      if (round < 2 || i > 0) model.prefilled(t, atMs);
    });
    const ends = tickets.map((t, i) => model.end(t, defaultTokenCounter.tokenizer.encode(text(30 + i * 50, round * 10 + i))));
    for (const t of tickets) {
      if (t.lookup !== undefined) figures.waited++;
      await model.settled(t);
      figures.hits.push({ ...t.hit });
    }
    await Promise.all(ends);
    figures.evictions.push(model.evictions);
    figures.cachedBlocks.push(model.cachedBlocks);
    histories.forEach((h, i) => {
      h.messages = [...h.messages, { role: 'assistant', content: text(30 + i * 50, round * 10 + i) }, { role: 'user', content: text(20, round + i) }];
    });
  }
  return figures;
}

test('ExpectedCache: a large prompt registered in steps of 3 blocks gives the same hits and evictions as registered at once', { timeout: 60_000 }, async () => {
  for (const capacityBlocks of [undefined, 1_500]) {
    const whole = await replay({ blockSize: 16, capacityBlocks, stepBlocks: 1e9, sliceMs: Infinity });
    const stepped = await replay({ blockSize: 16, capacityBlocks, stepBlocks: 3, sliceMs: 0 });
    assert.equal(whole.waited, 0, 'run whole: nothing waits');
    assert.ok(stepped.waited > 0, 'in steps: lookups wait behind registrations');
    assert.deepEqual(stepped.hits, whole.hits, `hits (capacity ${capacityBlocks})`);
    assert.deepEqual(stepped.evictions, whole.evictions, `evictions (capacity ${capacityBlocks})`);
    assert.deepEqual(stepped.cachedBlocks, whole.cachedBlocks, `cached blocks (capacity ${capacityBlocks})`);
    // The workload means something: the shared system prompt hits, and the capacity evicts.
    assert.ok(whole.hits.slice(2, 4).every((h) => h.infinite >= 10_000), `conversations prefilled after the first step hit the system prompt: ${JSON.stringify(whole.hits.slice(0, 4))}`);
    if (capacityBlocks !== undefined) assert.ok(whole.evictions.at(-1)! > 0, 'the capacity evicts');
  }
});
