import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Conversation } from '../../src/conversation/types.js';
import { ActiveConversation } from '../../src/load/active-conversation.js';
import { activeShare } from '../../src/load/executors/fixed-clients.js';
import { sleep } from '../../src/load/sleep.js';
import { StopController } from '../../src/load/stop.js';
import { WorkPool } from '../../src/load/work-pool.js';
import { RequestBudget } from '../../src/load/partition.js';

const conversation: Conversation = {
  id: 'c1',
  messages: [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'u1' },
    { role: 'assistant', content: 'a1' },
    { role: 'user', content: 'u2' },
    { role: 'assistant', content: 'a2' },
    { role: 'user', content: 'u3' },
  ],
};

describe('ActiveConversation', () => {
  test('sends the whole history with the answers used, system first', () => {
    const c = new ActiveConversation(conversation, 0);
    assert.equal(c.turnCount, 3);
    assert.deepEqual(c.requestMessages(), [conversation.messages[0], { role: 'user', content: 'u1' }]);
    assert.equal(c.recordedMessage?.content, 'a1');
    assert.equal(c.expectedCachedTokens, 0);
    c.answer({ content: 'server answer 1' }, 10, 5, () => 5);
    assert.equal(c.nextTurn, 2);
    assert.equal(c.expectedCachedTokens, 15);
    assert.deepEqual(
      c.requestMessages().map((m) => m.content),
      ['sys', 'u1', 'server answer 1', 'u2'],
    );
    c.answer({ content: 'server answer 2' }, 30, 7, () => 7);
    assert.equal(c.recordedMessage, undefined, 'the last user turn has no recorded answer');
    c.answer({ content: 'server answer 3' }, 50, 9, () => 9);
    assert.ok(c.done);
    assert.deepEqual(c.replayed().messages.map((m) => m.content), ['sys', 'u1', 'server answer 1', 'u2', 'server answer 2', 'u3', 'server answer 3']);
  });

  test('--max-turns counts user and assistant messages, as the reference', () => {
    assert.equal(new ActiveConversation(conversation, 0, 2).turnCount, 1);
    assert.equal(new ActiveConversation(conversation, 0, 3).turnCount, 2);
    assert.equal(new ActiveConversation(conversation, 0, 4).turnCount, 2);
    assert.equal(new ActiveConversation(conversation, 0, 100).turnCount, 3);
  });
});

describe('WorkPool', () => {
  test('hands out conversations in order, keeps an exact request budget, and accounts for every conversation', () => {
    const list = [0, 1, 2, 3].map((i) => new ActiveConversation({ ...conversation, id: `c${i}` }, i));
    const budget = new RequestBudget(3);
    const pool = new WorkPool(list, 4, budget);
    const a = pool.take()!;
    const b = pool.take()!;
    assert.deepEqual([a.id, b.id], ['c0', 'c1']);
    assert.ok(pool.takeRequest() && pool.takeRequest() && pool.takeRequest());
    assert.equal(pool.takeRequest(), false);
    assert.equal(budget.taken, 3);
    pool.complete(a);
    pool.fail(b);
    const c = pool.take()!;
    assert.deepEqual(pool.counts(), { total: 4, completed: 1, failed: 1, dropped: 0, unfinished: 0, not_started: 2 }, 'picked up but never answered is not started');
    c.answer({ content: 'answer' }, 1, 1, () => 1);
    assert.deepEqual(pool.counts(), { total: 4, completed: 1, failed: 1, dropped: 0, unfinished: 1, not_started: 1 });
    assert.equal(pool.finishedConversations.length, 1);
  });
});

describe('activeShare', () => {
  test('spreads -k across -p clients with no remainder lost', () => {
    const config = { numClients: 4, maxActiveConversations: 10, sampling: 'round_robin' as const, requestRate: 0, earlyStop: true, seed: 0 };
    const shares = [0, 1, 2, 3].map((id) => activeShare(id, config));
    assert.deepEqual(shares, [3, 3, 2, 2]);
    assert.equal(shares.reduce((a, b) => a + b), 10);
  });
});

describe('StopController and sleep', () => {
  test('the first reason wins; a stop cuts a sleep short and leaves no timer', async () => {
    const stop = new StopController();
    const pending = sleep(60_000, stop.stopping);
    stop.stop('duration');
    stop.abortInFlight('interrupted');
    assert.equal(await pending, false);
    assert.equal(stop.reason, 'duration');
    assert.ok(stop.abort.aborted);
    assert.equal(await sleep(1, new AbortController().signal), true);
  });
});
