// The expected-cache model's per-replica caches (issue #31, part 3): fed by the same request events as the one ideal
// cache, each request only to the cache of the replica its response head named (ExpectedCache.routed), before the
// first token (sharedFrom 'prefill', vLLM and SGLang) or after the lookup at the send (sharedFrom 'end', llama.cpp).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ExpectedCache, type ExpectedCacheConfig } from '../../src/cache-model/expected-cache.js';
import { MAX_REPLICAS } from '../../src/cache-model/replica-caches.js';
import { defaultTokenCounter, type ChatMessage } from '../../src/tokenizer/index.js';
import { filler } from '../helpers/datasets.js';

/** One conversation's three turns, each routed to `replicas[turn]`; each turn's figures after its lookup. */
async function turns(config: ExpectedCacheConfig, replicas: readonly string[], routeAfterFirstToken = false): Promise<Array<{ expected: number; perReplica: number | undefined }>> {
  const model = new ExpectedCache(defaultTokenCounter, { sliceMs: 0, ...config });
  const key = {};
  const messages: ChatMessage[] = [{ role: 'system', content: filler(600, 1) }];
  const out: Array<{ expected: number; perReplica: number | undefined }> = [];
  let atMs = 0;
  for (const [i, replica] of replicas.entries()) {
    messages.push({ role: 'user', content: `turn ${i}: ${filler(40, i + 2)}` });
    const ticket = await model.begin(key, messages, 16);
    if (!routeAfterFirstToken) model.routed(ticket, replica);
    model.prefilled(ticket, (atMs += 100));
    if (routeAfterFirstToken) model.routed(ticket, replica);
    await model.settled(ticket);
    out.push({ expected: ticket.hit.expected, perReplica: ticket.hit.perReplica });
    const answer = filler(30, i + 9);
    await model.end(ticket, defaultTokenCounter.tokenizer.encode(answer));
    messages.push({ role: 'assistant', content: answer });
  }
  return out;
}

describe('the per-replica expected caches', () => {
  // Without a capacity the replicas' pools are keyed by block hashes; with one, by the infinite index's entry ids.
  for (const [keyed, capacity] of [['hashes', {}], ['entry ids', { capacityBlocks: 10_000 }]] as const) {
    for (const sharedFrom of ['prefill', 'end'] as const) {
      test(`keyed by ${keyed}, sharedFrom ${sharedFrom}: a session kept on one replica hits there as in one cache; moved, it misses there`, async () => {
        const kept = await turns({ blockSize: 16, sharedFrom, ...capacity }, ['a', 'a', 'a']);
        for (const t of kept) assert.equal(t.perReplica, t.expected);
        assert.ok(kept[1]!.expected > 0);
        const moved = await turns({ blockSize: 16, sharedFrom, ...capacity }, ['a', 'b', 'a']);
        assert.equal(moved[1]!.perReplica, 0);
        assert.ok(moved[1]!.expected > 0);
        // Back on a: its cache holds turn 1 (not turn 2's answer, which went to b): a hit, short of the one cache's.
        assert.ok(moved[2]!.perReplica! > 0 && moved[2]!.perReplica! < moved[2]!.expected);
      });
    }

    test(`keyed by ${keyed}: a replica named after the lookup is looked up on its own (a late head)`, async () => {
      const late = await turns({ blockSize: 16, ...capacity }, ['a', 'a', 'b'], true);
      assert.equal(late[1]!.perReplica, late[1]!.expected);
      assert.equal(late[2]!.perReplica, 0);
    });
  }

  test('a late head reads its replica as it stands then, whether the pools are keyed by hashes or by entry ids', async () => {
    // sharedFrom 'end': A is looked up at its send, before B, with the same prompt, has registered its blocks; A's
    // replica is named only after B ended there. A's replica lookup then hits B's blocks, by either keying.
    const lateHit = async (capacity: { capacityBlocks?: number }): Promise<number | undefined> => {
      const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, sliceMs: 0, sharedFrom: 'end', ...capacity });
      const messages: ChatMessage[] = [{ role: 'system', content: filler(300, 1) }, { role: 'user', content: 'the same first turn' }];
      const a = await model.begin({}, messages, 16);
      const b = await model.begin({}, messages, 16);
      model.routed(b, 'r');
      model.prefilled(b, 10);
      await model.settled(b);
      await model.end(b, defaultTokenCounter.tokenizer.encode(filler(20, 2)));
      model.routed(a, 'r');
      model.prefilled(a, 20);
      await model.settled(a);
      assert.equal(a.hit.expected, 0, 'looked up at its send, before B registered');
      await model.end(a, undefined);
      return a.hit.perReplica;
    };
    const byHashes = await lateHit({});
    assert.ok(byHashes !== undefined && byHashes > 0, `by hashes ${byHashes}`);
    assert.equal(await lateHit({ capacityBlocks: 10_000 }), byHashes);
  });

  for (const sharedFrom of ['prefill', 'end'] as const) {
    test(`sharedFrom ${sharedFrom}: one replica as large as the one cache is that cache, hit for hit, through its evictions`, async () => {
      // 40 conversations of 4 turns, 8 in flight at once, through a capacity that holds a fraction of them.
      const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, sliceMs: 0, sharedFrom, capacityBlocks: 120 });
      let atMs = 0;
      let hits = 0;
      const conversation = async (c: number): Promise<void> => {
        const key = {};
        const messages: ChatMessage[] = [{ role: 'system', content: filler(200, c % 3) }];
        for (let turn = 0; turn < 4; turn++) {
          messages.push({ role: 'user', content: `conversation ${c} turn ${turn}: ${filler(30, c * 7 + turn)}` });
          const ticket = await model.begin(key, messages, 16);
          if (sharedFrom === 'prefill') model.routed(ticket, 'only');
          model.prefilled(ticket, (atMs += 10));
          if (sharedFrom === 'end') model.routed(ticket, 'only');
          await model.settled(ticket);
          assert.equal(ticket.hit.perReplica, ticket.hit.expected, `conversation ${c} turn ${turn}`);
          if (ticket.hit.expected > 0) hits++;
          const answer = filler(20, c * 11 + turn);
          await model.end(ticket, defaultTokenCounter.tokenizer.encode(answer));
          messages.push({ role: 'assistant', content: answer });
        }
      };
      for (let c = 0; c < 40; c += 8) await Promise.all(Array.from({ length: 8 }, (_, i) => conversation(c + i)));
      assert.ok(hits > 40, `hits ${hits}`);
      assert.ok(model.evictions > 0, 'the capacity evicted');
    });
  }

  test('no replica named: no per-replica figure', async () => {
    const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, sliceMs: 0 });
    const ticket = await model.begin({}, [{ role: 'user', content: filler(100, 3) }], 16);
    model.prefilled(ticket, 1);
    await model.settled(ticket);
    assert.equal(ticket.hit.perReplica, undefined);
    await model.end(ticket, undefined);
  });

  test(`at most ${MAX_REPLICAS} replicas get a cache`, async () => {
    const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, sliceMs: 0 });
    for (let i = 0; i < MAX_REPLICAS + 3; i++) {
      const ticket = await model.begin({}, [{ role: 'user', content: `request ${i}` }], 4);
      model.routed(ticket, `replica-${i}`);
      model.prefilled(ticket, i * 10);
      await model.settled(ticket);
      assert.equal(ticket.hit.perReplica === undefined, i >= MAX_REPLICAS);
      await model.end(ticket, undefined);
    }
    assert.equal(model.replicas, MAX_REPLICAS);
  });
});
