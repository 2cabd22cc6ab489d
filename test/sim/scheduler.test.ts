import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../src/sim/clock.js';
import { profiles, type SimConfig } from '../../src/sim/config.js';
import { Scheduler, type SchedulerRequest, type SchedulerRequestSpec, promptHash, promptHashYielding, stepDurationMs } from '../../src/sim/scheduler.js';
import { KvCache, RELEASE_STEP_BLOCKS, ROOT_BLOCK_HASH, blockHash } from '../../src/sim/kv-cache.js';
import { APPROX_VOCABULARY, WORD_LIST_SIZE } from '../../src/sim/words.js';
import { Rng } from '../../src/util/rng.js';
import { approxTokenizer, encodeIdsYielding } from '../../src/tokenizer/index.js';

// Round numbers so expected step times are easy to read: 1 ms per step, 0.01 ms per prefill token, 0.1 ms per decode.
const BASE: SimConfig = {
  ...profiles['cpu-tiny']!,
  step_base_ms: 1,
  prefill_ms_per_token: 0.01,
  decode_ms_per_seq: 0.1,
  attention_ms_per_token: 0,
  max_num_seqs: 64,
  max_num_batched_tokens: 4096,
  num_gpu_blocks: 1024,
};

interface Observed {
  req: SchedulerRequest;
  tokenTimesMs: number[];
  indexes: number[];
  text: string;
  finish: string | null;
}

function setup(overrides: Partial<SimConfig> = {}, seed = 0): { clock: VirtualClock; engine: Scheduler; submit: (spec: Partial<SchedulerRequestSpec> & { promptIds: number[] }) => Observed } {
  const clock = new VirtualClock(1000);
  const engine = new Scheduler({ ...BASE, ...overrides }, clock, { seed });
  const submit = (spec: Partial<SchedulerRequestSpec> & { promptIds: number[] }): Observed => {
    const o: Observed = { req: undefined as unknown as SchedulerRequest, tokenTimesMs: [], indexes: [], text: '', finish: null };
    o.req = engine.submit({ maxTokens: 4, ...spec }, {
      onToken(text, index, atMs, finish) {
        o.tokenTimesMs.push(atMs);
        o.indexes.push(index);
        o.text += text;
        if (finish !== null) o.finish = finish;
      },
      onFinish() {},
    });
    return o;
  };
  return { clock, engine, submit };
}

/** `n` distinct token ids starting at `from`. */
function ids(from: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}

function near(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} != ${expected}`);
}

function ttft(o: Observed): number {
  return o.tokenTimesMs[0]! - o.req.arrivalMs;
}

describe('generated words', () => {
  test('each word is exactly one approx token, bare first and spaced after, with the precomputed ids', () => {
    assert.equal(APPROX_VOCABULARY.size, WORD_LIST_SIZE, 'every word qualifies under the approximate tokenizer');
    for (let w = 0; w < APPROX_VOCABULARY.size; w++) {
      for (const position of [0, 1]) {
        const text = APPROX_VOCABULARY.text(w, position);
        assert.deepEqual(approxTokenizer.encode(text), [APPROX_VOCABULARY.id(w, position)], text);
      }
    }
  });

  test('an answer re-encodes to exactly its generated token ids', { timeout: 5000 }, () => {
    const { clock, submit } = setup();
    const o = submit({ promptIds: ids(1, 20), maxTokens: 50 });
    clock.runUntilIdle();
    assert.equal(o.indexes.length, 50);
    assert.deepEqual(approxTokenizer.encode(o.text), [...o.req.tokens.subarray(20, o.req.tokenCount)]);
    assert.equal(o.finish, 'length');
  });
});

describe('engine timing model (virtual clock)', () => {
  test('a lone request: TTFT is one prefill step, then one decode step per token; one timer at most', () => {
    const { clock, engine, submit } = setup();
    const o = submit({ promptIds: ids(1, 100), maxTokens: 3 });
    assert.equal(clock.pendingTimers, 1);
    clock.runUntilIdle();
    near(ttft(o), stepDurationMs(engine.config, 100, 0, 0), 'ttft');
    near(o.tokenTimesMs[1]! - o.tokenTimesMs[0]!, stepDurationMs(engine.config, 0, 1, 101), 'itl');
    assert.equal(clock.pendingTimers, 0, 'idle engine holds no timer');
  });

  test('TTFT grows with uncached prompt tokens, and a prefix-cache hit shortens it', () => {
    const { clock, submit } = setup();
    const short = submit({ promptIds: ids(1, 100) });
    clock.runUntilIdle();
    const long = submit({ promptIds: ids(10_000, 1000) });
    clock.runUntilIdle();
    assert.ok(ttft(long) > ttft(short), `${ttft(long)} > ${ttft(short)}`);
    const again = submit({ promptIds: ids(10_000, 1000) });
    clock.runUntilIdle();
    assert.equal(again.req.cachedTokens, Math.floor(999 / 16) * 16);
    assert.ok(ttft(again) < ttft(long));
  });

  test('TTFT grows with queueing (max_num_seqs 1: the second waits for the first)', () => {
    const { clock, submit } = setup({ max_num_seqs: 1 });
    const first = submit({ promptIds: ids(1, 50), maxTokens: 10 });
    const second = submit({ promptIds: ids(500, 50), maxTokens: 10 });
    clock.runUntilIdle();
    assert.ok(ttft(second) > ttft(first) + 9 * 1, `${ttft(second)} vs ${ttft(first)}`);
    assert.ok(second.tokenTimesMs[0]! >= first.tokenTimesMs.at(-1)!);
  });

  test('inter-token latency grows with batch size', () => {
    const itl = (batch: number): number => {
      const { clock, submit } = setup();
      const all = Array.from({ length: batch }, (_, i) => submit({ promptIds: ids(i * 1000 + 1, 32), maxTokens: 6 }));
      clock.runUntilIdle();
      const o = all[0]!;
      return (o.tokenTimesMs.at(-1)! - o.tokenTimesMs[0]!) / (o.tokenTimesMs.length - 1);
    };
    const one = itl(1);
    const eight = itl(8);
    const thirtyTwo = itl(32);
    assert.ok(eight > one && thirtyTwo > eight, `${one} < ${eight} < ${thirtyTwo}`);
  });

  test('chunked prefill: a prompt over the token budget takes several steps', () => {
    const { clock, engine, submit } = setup({ max_num_batched_tokens: 64 });
    const o = submit({ promptIds: ids(1, 200), maxTokens: 1 });
    clock.runUntilIdle();
    assert.equal(engine.stats().steps, 4);
    const expected = 3 * stepDurationMs(engine.config, 64, 0, 0) + stepDurationMs(engine.config, 8, 0, 0);
    near(ttft(o), expected, 'ttft');
  });

  test('cache hits are whole blocks and leave at least one prompt token to compute', () => {
    const { clock, submit } = setup();
    submit({ promptIds: ids(1, 32), maxTokens: 1 });
    clock.runUntilIdle();
    const again = submit({ promptIds: ids(1, 32), maxTokens: 1 });
    clock.runUntilIdle();
    assert.equal(again.req.cachedTokens, 16);
  });

  test('the answer is cached with the prompt: the next turn hits prompt + answer, floored to blocks', () => {
    const { clock, submit } = setup();
    const turn1 = submit({ promptIds: ids(1, 45), maxTokens: 30 });
    clock.runUntilIdle();
    const history = turn1.req.tokens.subarray(0, turn1.req.tokenCount); // 75 tokens: 4 full blocks
    const turn2 = submit({ promptIds: [...history, ...ids(9000, 20)], maxTokens: 1 });
    clock.runUntilIdle();
    assert.equal(turn2.req.cachedTokens, 64);
  });

  test('same seed and prompt with temperature 0 give the same text; the EOS model stops early with "stop"', () => {
    const run = (seed: number): string => {
      const { clock, submit } = setup({}, seed);
      const o = submit({ promptIds: ids(1, 10), maxTokens: 8, temperature: 0 });
      clock.runUntilIdle();
      return o.text;
    };
    assert.equal(run(1), run(1));
    assert.notEqual(run(1), run(2));
    const { clock, submit } = setup({ eos: { distribution: 'uniform', min: 3, max: 5 } });
    const eos = submit({ promptIds: ids(1, 10), maxTokens: 50 });
    const floor = submit({ promptIds: ids(100, 10), maxTokens: 50, minTokens: 20 });
    const ignore = submit({ promptIds: ids(200, 10), maxTokens: 50, ignoreEos: true });
    clock.runUntilIdle();
    assert.ok(eos.indexes.length >= 3 && eos.indexes.length <= 5);
    assert.equal(eos.finish, 'stop');
    assert.equal(floor.indexes.length, 20);
    assert.equal(ignore.indexes.length, 50);
    assert.equal(ignore.finish, 'length');
  });
});

describe('KV cache pressure', () => {
  test('finished requests stay cached and are evicted LRU when space is needed', () => {
    const { clock, engine, submit } = setup({ num_gpu_blocks: 10 });
    submit({ promptIds: ids(1, 40), maxTokens: 8 }); // 48 tokens: 3 cached blocks (A)
    clock.runUntilIdle();
    submit({ promptIds: ids(1000, 40), maxTokens: 8 }); // B, 3 more
    clock.runUntilIdle();
    assert.equal(engine.kv.numCached, 6);
    submit({ promptIds: ids(2000, 112), maxTokens: 1 }); // 7 blocks: 4 free + 3 evicted, A's (least recent)
    clock.runUntilIdle();
    assert.equal(engine.stats().evictions, 3);
    const b = submit({ promptIds: ids(1000, 40), maxTokens: 1 });
    clock.runUntilIdle();
    assert.equal(b.req.cachedTokens, 32, 'B survived');
    const a = submit({ promptIds: ids(1, 40), maxTokens: 1 });
    clock.runUntilIdle();
    assert.equal(a.req.cachedTokens, 0, 'A was evicted');
  });

  test('a running request that needs a block when none is free preempts the latest admitted; it recomputes and keeps its tokens', () => {
    const { clock, engine, submit } = setup({ num_gpu_blocks: 6, max_num_seqs: 2 });
    const a = submit({ promptIds: ids(1, 16), maxTokens: 60 });
    const b = submit({ promptIds: ids(500, 16), maxTokens: 60 });
    clock.runUntilIdle();
    assert.ok(engine.stats().preemptions >= 1);
    assert.ok(b.req.preemptions >= 1);
    assert.equal(a.req.preemptions, 0, 'the earliest admitted keeps running');
    assert.deepEqual(a.indexes, ids(0, 60));
    assert.deepEqual(b.indexes, ids(0, 60), 'no token repeated or lost across the preemption');
    assert.equal(engine.kv.usage, 0);
  });

  test('a preempted request keeps the cached tokens of its first scheduling: its recomputed blocks are not hits (vLLM)', () => {
    const { clock, engine, submit } = setup({ num_gpu_blocks: 6, max_num_seqs: 2 });
    const a = submit({ promptIds: ids(1, 40), maxTokens: 30 });
    const b = submit({ promptIds: ids(500, 40), maxTokens: 30 });
    clock.runUntilIdle();
    assert.ok(b.req.preemptions >= 1, 'the scenario preempts');
    // Neither prompt shares a block with anything: at first scheduling nothing was cached, whatever came after.
    assert.equal(a.req.cachedTokens, 0);
    assert.equal(b.req.cachedTokens, 0);
    assert.equal(engine.stats().prefixHitTokens, 0, 'the hits counter counts first schedulings only');
    assert.equal(engine.stats().prefixQueriedTokens, 80, 'each prompt looked up once');
  });

  test('cache_semantics llamacpp: token by token, a running request shares nothing, an ended one all but its last sampled token', () => {
    const { clock, submit } = setup({ cache_semantics: 'llamacpp', block_size: 1, num_gpu_blocks: 4096 });
    const a = submit({ promptIds: ids(1, 40), maxTokens: 5 });
    clock.runUntilIdle(); // a has ended: its prompt and 4 of its 5 answer tokens (the 5th, cut at its length, never decoded)
    const b = submit({ promptIds: [...ids(1, 40), ...a.req.tokens.subarray(40, 45), 999], maxTokens: 30 });
    clock.advance(3); // b runs (prefilled, decoding), with a's 44 tokens
    assert.equal(b.req.cachedTokens, 44, 'a\'s prompt and its answer but the last token');
    const c = submit({ promptIds: [...ids(1, 40), ...a.req.tokens.subarray(40, 45), 999, 1000, 1001], maxTokens: 1 });
    clock.runUntilIdle();
    assert.equal(c.req.cachedTokens, 44, 'b was still running when c came: its tokens were not shared yet');
  });

  test('waiting requests wait for KV; a request that can never fit is rejected with 400', () => {
    const { clock, engine, submit } = setup({ num_gpu_blocks: 4 });
    assert.throws(() => submit({ promptIds: ids(1, 60), maxTokens: 10 }), (e: Error & { status?: number }) => e.status === 400);
    const a = submit({ promptIds: ids(1, 40), maxTokens: 20 });
    const b = submit({ promptIds: ids(100, 40), maxTokens: 20 });
    clock.advance(0);
    assert.equal(engine.numRunning, 1);
    assert.equal(engine.numWaiting, 1);
    clock.runUntilIdle();
    assert.equal(a.indexes.length, 20);
    assert.equal(b.indexes.length, 20);
    assert.ok(b.tokenTimesMs[0]! >= a.tokenTimesMs.at(-1)!);
  });

  test('max_waiting bounds the queue (503); abort frees blocks', () => {
    const { clock, engine, submit } = setup({ max_waiting: 1 });
    const a = submit({ promptIds: ids(1, 40), maxTokens: 100 });
    assert.throws(() => submit({ promptIds: ids(100, 40) }), (e: Error & { status?: number }) => e.status === 503);
    clock.advance(5);
    assert.equal(engine.numRunning, 1);
    assert.ok(engine.kv.usage > 0);
    engine.abort(a.req);
    assert.equal(engine.numRunning, 0);
    assert.equal(engine.kv.usage, 0);
    const count = a.indexes.length;
    clock.runUntilIdle();
    assert.equal(a.indexes.length, count, 'no callbacks after abort');
  });
});

describe('KvCache', () => {
  test('hash chains differ by parent and content; lookup stops at the first miss; reset drops unreferenced blocks', () => {
    const kv = new KvCache(8);
    const tokens = ids(1, 48);
    const h0 = blockHash(ROOT_BLOCK_HASH, tokens, 0, 16);
    const h1 = blockHash(h0, tokens, 16, 16);
    assert.notEqual(h1, blockHash(ROOT_BLOCK_HASH, tokens, 16, 16));
    const blocks = kv.allocate(2)!;
    kv.register(blocks[0]!, h0);
    kv.register(blocks[1]!, h1);
    assert.deepEqual(kv.lookup(10, (i) => [h0, h1, 12345][i]), blocks);
    assert.deepEqual(kv.lookup(1, (i) => [h0, h1][i]), [blocks[0]]);
    kv.release(blocks);
    assert.equal(kv.numAvailable, 8);
    assert.equal(kv.numCached, 2);
    assert.equal(kv.resetPrefixCache(), 2);
    assert.equal(kv.numCached, 0);
    assert.equal(kv.allocate(9), null);
  });
  test('released cached blocks are evicted least recently released first, a re-acquired one leaves the order', () => {
    const kv = new KvCache(6);
    const blocks = kv.allocate(6)!;
    blocks.forEach((b, i) => kv.register(b, 1000 + i));
    kv.release([blocks[0]!, blocks[1]!]); // released in reverse: 1 then 0
    kv.release([blocks[2]!, blocks[3]!, blocks[4]!]); // 4, 3, 2
    assert.equal(kv.numAvailable, 5);
    kv.acquire([blocks[3]!]); // a hit takes it out of the LRU order
    assert.equal(kv.numAvailable, 4);
    kv.release([blocks[3]!]); // now the most recent
    // Evicted in order 1, 0, 4, 2, 3: each allocation takes the least recently released.
    const order = [blocks[1], blocks[0], blocks[4], blocks[2], blocks[3]];
    for (const want of order) {
      assert.deepEqual(kv.allocate(1), [want]);
      assert.deepEqual(kv.lookup(1, () => 1000 + blocks.indexOf(want!)), [], 'its hash is dropped');
    }
    assert.equal(kv.allocate(1), null);
    assert.equal(kv.evictions, 5);
    assert.deepEqual(kv.lookup(1, () => 1005), [blocks[5]], 'the block still held stays cached');
  });

  test('its typed-array hash index answers as a Map of hash -> block does, through registrations, evictions and resets', () => {
    // The model: the Map the index replaced (issue #14), beside which blocks each side gives out and evicts. Few
    // distinct hashes over 64 blocks, so the table's probe runs collide, wrap and shift back on deletion.
    const rng = new Rng(7);
    const kv = new KvCache(64);
    const byHash = new Map<number, number>();
    const hashOf = new Map<number, number>();
    const held: number[][] = [];
    for (let step = 0; step < 20_000; step++) {
      const op = rng.int(0, 9);
      if (op <= 3 && kv.numAvailable > 0) {
        const blocks = kv.allocate(rng.int(1, Math.min(8, kv.numAvailable)))!;
        for (const b of blocks) {
          // An allocated block that was cached was evicted: its hash is gone.
          const h = hashOf.get(b);
          if (h !== undefined) byHash.delete(h);
          hashOf.delete(b);
        }
        held.push(blocks);
      } else if (op <= 6 && held.length > 0) {
        const blocks = held[rng.int(0, held.length - 1)]!;
        const b = blocks[rng.int(0, blocks.length - 1)]!;
        // Float hashes as blockHash makes them (53 bits), from a small set so that they repeat.
        const hash = rng.int(0, 300) * 0x200000 + 0.5 * rng.int(0, 1) + 17;
        kv.register(b, hash);
        if (!hashOf.has(b) && !byHash.has(hash)) {
          byHash.set(hash, b);
          hashOf.set(b, hash);
        }
      } else if (op <= 8 && held.length > 0) {
        kv.release(held.splice(rng.int(0, held.length - 1), 1)[0]!);
      } else if (op === 9 && rng.int(0, 20) === 0) {
        kv.resetPrefixCache();
        const referenced = new Set(held.flat());
        for (const [b, h] of hashOf) {
          if (referenced.has(b)) continue;
          byHash.delete(h);
          hashOf.delete(b);
        }
      }
      assert.equal(kv.numCached, byHash.size, `step ${step}: cached count`);
      if (step % 97 === 0) {
        for (let hash = 17; hash < 301 * 0x200000; hash += 0x200000) {
          for (const h of [hash, hash + 0.5]) assert.deepEqual(kv.lookup(1, () => h), byHash.has(h) ? [byHash.get(h)] : [], `step ${step}: hash ${h}`);
        }
      }
    }
  });

  test('a long release, put back in steps, answers as the same blocks released in short lists at once', async () => {
    // A cache whose blocks are held twice (two requests sharing them) or once, cached or not, released in one long list.
    const n = 3 * RELEASE_STEP_BLOCKS + 77;
    const setUp = (): { kv: KvCache; blocks: number[] } => {
      const kv = new KvCache(n + 10);
      const blocks = kv.allocate(n)!;
      blocks.forEach((b, i) => {
        if (i % 3 !== 0) kv.register(b, 1000 + i);
      });
      kv.acquire(blocks.filter((_, i) => i % 5 === 0));
      return { kv, blocks };
    };
    // The reference: the same reverse order, in lists shorter than a step (each put back at once).
    const reference = setUp();
    for (let end = n; end > 0; end -= 1000) reference.kv.release(reference.blocks.slice(Math.max(0, end - 1000), end));
    const state = (kv: KvCache): unknown => ({ available: kv.numAvailable, unreferenced: kv.countUnreferenced(reference.blocks), order: kv.allocate(kv.numAvailable), evictions: kv.evictions });
    const expected = state(reference.kv);
    // Read at once (the rest put back before the read), after one turn, and after every step has run.
    for (const turns of [0, 1, 10]) {
      const { kv, blocks } = setUp();
      kv.release(blocks);
      blocks.length = 0; // as the engine does: the cache must not depend on the caller's list
      for (let t = 0; t < turns; t++) await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(state(kv), expected, `read after ${turns} turns`);
    }
  });
});

describe('the prompt hash and ids at submit', () => {
  test('promptHashYielding, in steps, equals promptHash at once', async () => {
    const prompt = Uint32Array.from({ length: 600_000 }, (_, i) => (i * 2654435761) >>> 8);
    let yields = 0;
    const stepped = await promptHashYielding(prompt, async () => {
      yields++;
    });
    assert.equal(stepped, promptHash(prompt));
    assert.ok(yields >= 2, `the loop was let go between steps (${yields})`);
    assert.equal(await promptHashYielding([1, 2, 3], async () => assert.fail('a short prompt is hashed at once')), promptHash([1, 2, 3]));
  });

  test('a given promptHash, and given-up ids kept as the tokens, answer as a copied prompt hashed at submit', () => {
    const prompt = ids(1, 100);
    const plain = setup();
    const a = plain.submit({ promptIds: prompt, maxTokens: 6, temperature: 0 });
    plain.clock.runUntilIdle();
    const kept = setup();
    // The encoder's array: room past the prompt holding stale ids, which the request must not see.
    const room = new Uint32Array(200).fill(99_999);
    room.set(prompt);
    const given = room.subarray(0, prompt.length);
    const b = kept.submit({ promptIds: given as unknown as number[], ownIds: true, promptHash: promptHash(prompt), maxTokens: 6, temperature: 0 });
    kept.clock.runUntilIdle();
    assert.equal(b.text, a.text);
    assert.equal(b.req.tokens.buffer, room.buffer, 'the ids were kept, not copied');
    assert.deepEqual([...b.req.tokens], [...a.req.tokens]);
    // Without room for the output, or not given up, the ids are copied.
    const tight = Uint32Array.from(prompt);
    const c = kept.submit({ promptIds: tight as unknown as number[], ownIds: true, maxTokens: 6 });
    assert.notEqual(c.req.tokens.buffer, tight.buffer);
    const d = kept.submit({ promptIds: room.subarray(0, 100) as unknown as number[], maxTokens: 6 });
    assert.notEqual(d.req.tokens.buffer, room.buffer);
  });

  test("a short prompt's given-up ids write nothing past their own array (an id array cut from Node's Buffer pool would)", async () => {
    // The server gives up what encodeIdsYielding made, and the engine keeps its buffer when it has room: that buffer
    // must be the encoder's alone. A Buffer cut from the pool just after it must keep its bytes through the answer.
    const given = await encodeIdsYielding(approxTokenizer, 'a short prompt of a few words');
    const neighbour = Buffer.allocUnsafe(64).fill(7);
    const kept = setup();
    const b = kept.submit({ promptIds: given as unknown as number[], ownIds: true, maxTokens: 24, temperature: 0 });
    kept.clock.runUntilIdle();
    assert.ok(b.text.length > 0, 'it answered');
    assert.ok(neighbour.every((x) => x === 7), `the neighbouring bytes were left alone: ${neighbour.toString('hex')}`);
  });
});
