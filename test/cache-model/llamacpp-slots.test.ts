import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LlamacppSlotModels, SlotLayoutChoice, type SlotTicket } from '../../src/cache-model/llamacpp-slots.js';
import { PrefixTree, ROOT } from '../../src/prefix-cache/prefix-tree.js';
import { Rng } from '../../src/util/rng.js';
import { SlotScheduler, type Slot } from '../helpers/llamacpp-slots-server.js';

// The model of llama.cpp's slots and prompt cache (src/cache-model/llamacpp-slots.ts) against the test server's
// scheduler (test/helpers/llamacpp-slots-server.ts, written apart from llama.cpp's source and checked against a live
// llama-server): the same arrivals and ends, request by request the same reused tokens, for both KV layouts.

/** A seeded stream of [0, 1) (chatload's own), so that a failure replays. */
function rng(seed: number): () => number {
  const stream = new Rng(seed);
  return () => stream.next();
}

/** Chained keys with no collision: one number per distinct prefix, as a chained block hash names its prefix. */
class Keys {
  readonly #ids = new Map<string, number>();
  of(tokens: readonly number[]): number[] {
    const keys: number[] = [];
    let previous = 0;
    for (const token of tokens) {
      const name = `${previous},${token}`;
      let key = this.#ids.get(name);
      if (key === undefined) this.#ids.set(name, (key = this.#ids.size + 1));
      keys.push(key);
      previous = key;
    }
    return keys;
  }
}

function run(steps: Generator<void | Promise<unknown>, unknown, void>): void {
  for (const step of steps) assert.equal(step, undefined, 'no promise: nothing to wait for');
}

describe('PrefixTree', () => {
  test('the common prefix of any two stored sequences is their longest common prefix, from any registered start', () => {
    const random = rng(7);
    const keys = new Keys();
    const tree = new PrefixTree();
    const sequences: Array<{ tokens: number[]; node: number }> = [];
    for (let i = 0; i < 300; i++) {
      // Branch off a stored sequence (or start afresh) and add a few tokens from a small alphabet.
      const base = sequences.length > 0 && random() < 0.8 ? sequences[Math.floor(random() * sequences.length)]!.tokens : [];
      const tokens = base.slice(0, Math.floor(random() * (base.length + 1)));
      for (let n = Math.floor(random() * 40); n > 0; n--) tokens.push(Math.floor(random() * 3));
      const from = Math.floor(random() * (tokens.length + 1));
      const node = tree.extend(keys.of(tokens), Math.min(from, base.length), tokens.length);
      sequences.push({ tokens, node });
      assert.equal(tree.depth(node), tokens.length);
    }
    for (let i = 0; i < 2000; i++) {
      const a = sequences[Math.floor(random() * sequences.length)]!;
      const b = sequences[Math.floor(random() * sequences.length)]!;
      let lcp = 0;
      while (lcp < a.tokens.length && lcp < b.tokens.length && a.tokens[lcp] === b.tokens[lcp]) lcp++;
      assert.equal(tree.commonPrefix(a.node, b.node), lcp);
    }
    assert.equal(tree.commonPrefix(ROOT, sequences[0]!.node), 0);
  });

  test('deepest: the longest leading part a prompt shares with what is stored', () => {
    const keys = new Keys();
    const tree = new PrefixTree();
    tree.extend(keys.of([1, 2, 3, 4]), 0, 4);
    assert.equal(tree.depth(tree.deepest(keys.of([1, 2, 3, 9, 9]), 0, 5)), 3);
    assert.equal(tree.depth(tree.deepest(keys.of([5]), 0, 1)), 0);
    // A `from` whose block is missing is not trusted: the walk starts again from the first block.
    assert.equal(tree.depth(tree.deepest(keys.of([7, 7, 7]), 2, 3)), 0);
  });
});

interface Request {
  conversation: number;
  prompt: number[];
  answer: number[];
  ticket: SlotTicket;
  /** The tokens the scheduler's slot reused, per layout (own KV, unified). */
  served: [number | undefined, number | undefined];
  slots: [Slot | undefined, Slot | undefined];
}

/**
 * `conversations` sharing a system prompt, run on `slots` slots with `clients` in flight at most: arrivals and ends in
 * a random order, each to the model and to the scheduler of each layout. Some turns resend their history changed (a
 * template that drops part of the answer), and `known` is what the model's caller would say: the unchanged part.
 */
function replay(seed: number, slots: number, clients: number, conversations: number, turns: number): Request[] {
  const random = rng(seed);
  const keys = new Keys();
  const model = new LlamacppSlotModels(slots, 1);
  const schedulers = [false, true].map((unifiedKv) => new SlotScheduler(slots, { similarity: 0.1, promptCache: true, cacheTokens: Infinity, cacheIdleSlots: true, unifiedKv }));
  const system = Array.from({ length: 20 + Math.floor(random() * 60) }, () => Math.floor(random() * 50));
  const history = Array.from({ length: conversations }, () => ({ tokens: system.slice(), turn: 0, busy: false, known: 0 }));
  const done: Request[] = [];
  const inFlight: Request[] = [];
  while (true) {
    const idle = history.map((h, i) => (!h.busy && h.turn < turns ? i : -1)).filter((i) => i >= 0);
    const launched = inFlight.filter((r) => r.slots[0] !== undefined);
    if (idle.length === 0 && launched.length === 0) break;
    if (idle.length > 0 && inFlight.length < clients && (launched.length === 0 || random() < 0.5)) {
      const c = idle[Math.floor(random() * idle.length)]!;
      const h = history[c]!;
      // Now and then the history comes back shorter than the slot held it (the answer's last tokens differ).
      const resent = h.turn > 0 && random() < 0.3 ? h.tokens.slice(0, h.tokens.length - 1 - Math.floor(random() * 4)) : h.tokens;
      const prompt = [...resent, ...Array.from({ length: 5 + Math.floor(random() * 30) }, () => Math.floor(random() * 50))];
      const request: Request = { conversation: c, prompt, answer: [], ticket: { slotHit: undefined, slotHitUnified: undefined }, served: [undefined, undefined], slots: [undefined, undefined] };
      h.busy = true;
      inFlight.push(request);
      run(model.arriveSteps(request.ticket, keys.of(prompt), Math.min(h.known, resent.length), prompt.length));
      schedulers.forEach((scheduler, layout) =>
        scheduler.submit({
          promptIds: prompt,
          idSlot: -1,
          deferred: false,
          start: (slot, _by, _restored, before) => {
            let reused = 0;
            while (reused < before.length && reused < prompt.length && before[reused] === prompt[reused]) reused++;
            request.served[layout] = reused === prompt.length ? reused - 1 : reused;
            request.slots[layout] = slot;
            slot.tokens = prompt.slice();
          },
        }),
      );
      continue;
    }
    const request = launched[Math.floor(random() * launched.length)]!;
    inFlight.splice(inFlight.indexOf(request), 1);
    request.answer = Array.from({ length: 1 + Math.floor(random() * 20) }, () => Math.floor(random() * 50));
    const sequence = [...request.prompt, ...request.answer];
    const h = history[request.conversation]!;
    Object.assign(h, { tokens: sequence, turn: h.turn + 1, busy: false, known: sequence.length });
    run(model.endSteps(request.ticket, keys.of(sequence), sequence.length));
    schedulers.forEach((scheduler, layout) => {
      const slot = request.slots[layout]!;
      slot.tokens = sequence.slice();
      scheduler.release(slot);
    });
    done.push(request);
  }
  return done;
}

describe("llama.cpp's slots and prompt cache, against the test server's scheduler", () => {
  for (const [slots, clients] of [
    [2, 6],
    [4, 3],
    [3, 2],
    [1, 3],
    [4, 8],
  ] as const) {
    test(`${slots} slots, ${clients} clients: every request's reused tokens are the scheduler's, in both KV layouts`, () => {
      for (let seed = 1; seed <= 60; seed++) {
        const requests = replay(seed * 97 + slots, slots, clients, 12, 8);
        assert.equal(requests.length, 96);
        for (const [i, r] of requests.entries()) {
          const where = `seed ${seed}, request ${i} (conversation ${r.conversation}, ${r.prompt.length} tokens)`;
          assert.equal(r.ticket.slotHit, r.served[0], `${where}: own KV`);
          assert.equal(r.ticket.slotHitUnified, r.served[1], `${where}: unified KV`);
        }
      }
    });
  }

  test('the layout whose figures the server matched more often explains the misses', () => {
    const model = new SlotLayoutChoice();
    const ticket = { slotHit: 10, slotHitUnified: 30 };
    assert.equal(model.slotHit(ticket, 10), 10, 'own KV matched first');
    assert.equal(model.slotHit({ slotHit: 5, slotHitUnified: 7 }, 7), 5, 'a tie keeps own KV');
    assert.equal(model.slotHit({ slotHit: 5, slotHitUnified: 8 }, 8), 8, 'then unified leads');
  });
});
