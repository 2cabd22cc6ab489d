import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExpectedCache } from '../../src/cache-model/expected-cache.js';
import { defaultTokenCounter, type ChatMessage } from '../../src/tokenizer/index.js';
import { filler } from '../helpers/datasets.js';

/*
 * The capacity model's pools are keyed by the infinite index's entry ids, and each conversation keeps its blocks' ids
 * between its requests, for the blocks its next prompt leaves unchanged (cache-index.ts, ConversationNote). A history
 * that changes under a conversation (an edited message, a dropped exchange) must drop the ids of the blocks after the
 * change: a stale id names another block, and the capacity figure would then count a hit the infinite index does not.
 */

interface Figures {
  expected: number[];
  infinite: number[];
}

/**
 * Four conversations sharing a system prompt, five turns each, one request at a time. Conversation 1 has its first
 * user message rewritten before its fourth turn; conversation 2 drops its last exchange before its fourth turn;
 * conversation 3 sends its fourth prompt again as its fifth.
 */
async function drive(model: ExpectedCache): Promise<Figures> {
  const figures: Figures = { expected: [], infinite: [] };
  const system = filler(300, 5);
  const histories = Array.from({ length: 4 }, (): ChatMessage[] => [{ role: 'system', content: system }]);
  const keys = histories.map(() => ({}));
  let atMs = performance.now() - 100_000;
  for (let turn = 0; turn < 5; turn++) {
    for (let c = 0; c < 4; c++) {
      let history = histories[c]!;
      if (turn === 3 && c === 1) history = [history[0]!, { role: 'user', content: `rewritten: ${filler(40, 99)}` }, ...history.slice(2)];
      if (turn === 3 && c === 2) history = history.slice(0, -2);
      const messages: ChatMessage[] = turn === 4 && c === 3 ? history.slice(0, -1) : [...history, { role: 'user', content: `${c}/${turn}: ${filler(40, c * 10 + turn)}` }];
      const ticket = await model.begin(keys[c]!, messages, 16);
      model.prefilled(ticket, (atMs += 10));
      await model.settled(ticket);
      figures.expected.push(ticket.hit.expected);
      figures.infinite.push(ticket.hit.infinite);
      const answer = turn === 4 && c === 3 ? (history.at(-1)!.content as string) : filler(30, c * 7 + turn);
      await model.end(ticket, { text: answer, reasoning: false, finishReason: 'stop' });
      histories[c] = [...messages, { role: 'assistant', content: answer }];
    }
  }
  return figures;
}

test('a capacity the run never fills gives the infinite figures, through histories that change under a conversation', { timeout: 30_000 }, async () => {
  const ample = await drive(new ExpectedCache(defaultTokenCounter, { blockSize: 16, capacityBlocks: 1_000_000 }));
  const infinite = await drive(new ExpectedCache(defaultTokenCounter, { blockSize: 16 }));
  assert.deepEqual(ample.infinite, infinite.infinite);
  assert.deepEqual(ample.expected, ample.infinite, 'with room for every block, the capacity model hits what the infinite index hits');
  // The changed histories did lose hits: the rewritten conversation hits only the system prompt, the shortened one
  // less than a conversation whose history grew as usual.
  const at = (turn: number, c: number): number => infinite.infinite[turn * 4 + c]!;
  assert.ok(at(3, 1) < at(2, 1) && at(3, 1) > 0, `rewritten: ${at(3, 1)} after ${at(2, 1)}`);
  assert.ok(at(3, 2) < at(3, 0), `shortened: ${at(3, 2)} against ${at(3, 0)}`);
});
