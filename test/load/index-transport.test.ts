import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { describe, test } from 'node:test';
import { ExpectedCache } from '../../src/cache-model/expected-cache.js';
import { IndexOwner } from '../../src/cache-model/index-owner.js';
import { RemoteIndexDriver } from '../../src/cache-model/index-transport.js';
import { defaultTokenCounter, type ChatMessage } from '../../src/tokenizer/index.js';
import { filler } from '../helpers/datasets.js';

/*
 * The expected-cache model's transport (issue #31): two ExpectedCaches feeding one IndexOwner by message give the
 * figures one ExpectedCache gives for the same requests in the same order; and a request never waits for an owner
 * that is gone.
 */

interface Figures {
  expected: number[];
  infinite: number[];
  missCauses: Array<string | null>;
  /** In the cache of the replica each request was routed to (undefined when not routed). */
  perReplica: Array<number | undefined>;
}

/** Conversation c's turn on replica c % 2, its third turn moved to the other: hits kept, hits lost, and late heads. */
const moving = (c: number, turn: number): string => `replica-${(c + (turn === 2 ? 1 : 0)) % 2}`;

/**
 * Six conversations sharing a system prompt, three turns each, one request at a time (sent, first token, figures,
 * account, end), conversation i driven by models[i % models.length]. The server is taken to have cached a block less
 * than expected on turn 2 (a miss to account for).
 */
async function drive(models: ExpectedCache[], sync: () => Promise<void> = async () => {}, route?: (c: number, turn: number) => string): Promise<Figures> {
  const figures: Figures = { expected: [], infinite: [], missCauses: [], perReplica: [] };
  const system = filler(400, 3);
  const histories = Array.from({ length: 6 }, (): ChatMessage[] => [{ role: 'system', content: system }]);
  const keys = histories.map(() => ({}));
  // First tokens 10 ms apart, all in the past: each request's end (timed by the clock) comes after every first token
  // so far, whatever the pace of the run, and the same-step rule reads the same in both runs.
  let atMs = performance.now() - 100_000;
  for (let turn = 0; turn < 3; turn++) {
    for (let c = 0; c < 6; c++) {
      const model = models[c % models.length]!;
      const messages: ChatMessage[] = [...histories[c]!, { role: 'user', content: `${c}/${turn}: ${filler(20, c * 10 + turn)}` }];
      const ticket = await model.begin(keys[c]!, messages, 16);
      // The response head names the replica before the first token (after the lookup at the send, sharedFrom 'end').
      if (route !== undefined) model.routed(ticket, route(c, turn));
      model.prefilled(ticket, (atMs += 10));
      await model.settled(ticket);
      figures.perReplica.push(ticket.hit.perReplica);
      figures.expected.push(ticket.hit.expected);
      figures.infinite.push(ticket.hit.infinite);
      figures.missCauses.push(model.account(ticket, Math.max(0, ticket.hit.expected - (turn === 1 ? 16 : 0))).missCause);
      const answer = filler(12, c * 7 + turn);
      await model.end(ticket, { text: answer, reasoning: false, finishReason: 'stop' });
      await sync();
      histories[c] = [...messages, { role: 'assistant', content: answer }];
    }
  }
  return figures;
}

/**
 * Two models, each feeding one IndexOwner by its own port, as two worker threads do. `ended`: waits until every
 * request's end has reached the owner, so that the next request's send comes after it, as one loop has it (two ports'
 * messages may arrive in either order; in a run, the order of arrival is the model's order).
 */
function twoModelsOneOwner(config: ConstructorParameters<typeof IndexOwner>[0]): { owner: IndexOwner; models: ExpectedCache[]; ended: () => Promise<void>; close: () => Promise<void> } {
  const owner = new IndexOwner(config);
  const models = [0, 1].map((part) => {
    const { port1, port2 } = new MessageChannel();
    owner.attach(part, port1);
    return new ExpectedCache(defaultTokenCounter, config, undefined, new RemoteIndexDriver(port2, config));
  });
  const ended = async (): Promise<void> => {
    while (owner.openRequests > 0) await new Promise((resolve) => setImmediate(resolve));
  };
  const close = async (): Promise<void> => {
    for (const model of models) await model.close();
    owner.close();
  };
  return { owner, models, ended, close };
}

describe('the expected-cache model across threads (issue #31)', () => {
  for (const capacityBlocks of [undefined, 120]) {
    test(`two models feeding one owner by message give one model's figures (capacity ${capacityBlocks ?? 'infinite'})`, { timeout: 30_000 }, async () => {
      const config = { blockSize: 16, capacityBlocks };
      const one = await drive([new ExpectedCache(defaultTokenCounter, config)]);
      const { owner, models, ended, close } = twoModelsOneOwner(config);
      try {
        const two = await drive(models, ended);
        assert.deepEqual(two, one);
        // Conversation 1 (the second model's first) hits the system prompt conversation 0 sent through the first.
        assert.ok(two.expected[1]! > 300, `conversation 1, turn 1: expected ${two.expected[1]}`);
        if (capacityBlocks !== undefined) assert.ok(owner.evictions > 0, 'the capacity evicts');
        assert.ok(owner.received > 0 && owner.sent > 0);
      } finally {
        await close();
      }
    });
  }

  for (const [sharedFrom, capacityBlocks] of [['prefill', undefined], ['prefill', 120], ['end', undefined]] as const) {
    test(`routed requests: the owner's per-replica caches give one model's figures (sharedFrom ${sharedFrom}, capacity ${capacityBlocks ?? 'infinite'})`, { timeout: 30_000 }, async () => {
      const config = { blockSize: 16, capacityBlocks, sharedFrom };
      const one = await drive([new ExpectedCache(defaultTokenCounter, config)], undefined, moving);
      const { owner, models, ended, close } = twoModelsOneOwner(config);
      try {
        const two = await drive(models, ended, moving);
        assert.deepEqual(two, one);
        // Every request has a per-replica figure, and some hit less in their replica's cache than in the one cache.
        assert.ok(two.perReplica.every((n) => n !== undefined));
        assert.ok(two.perReplica.some((n, i) => n! < two.expected[i]!));
        assert.equal(owner.replicas, 2);
      } finally {
        await close();
      }
    });
  }

  test('a request does not wait for an owner that is gone: it has no figures', { timeout: 30_000 }, async () => {
    const config = { blockSize: 16 };
    const { port1, port2 } = new MessageChannel();
    const model = new ExpectedCache(defaultTokenCounter, config, undefined, new RemoteIndexDriver(port2, config));
    const ticket = await model.begin({}, [{ role: 'user', content: filler(100, 1) }], 8);
    model.prefilled(ticket, performance.now());
    // The owner's end closes without answering.
    port1.close();
    await model.settled(ticket);
    assert.equal(ticket.known, false);
    assert.equal(model.account(ticket, 32).missCause, null);
    await model.end(ticket, undefined);
    await model.close();
  });
});
