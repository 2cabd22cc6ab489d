// The simulator's replicas and routers (issue #31), over real loopback HTTP: each router kind picks as documented in
// docs/SIMULATOR.md, every response names its replica in x-chatload-replica, the per-replica /metrics pages count their
// own requests and the router's page sums them, and a router that scatters conversations loses prefix-cache hits.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { REPLICA_HEADER, startSimulator, type RouterKind, type RunningSimulator, type TraceLine } from '../../src/sim/index.js';
import { metricValue } from './sim-http.js';
import { tempDir } from '../helpers/tmp.js';

const MODEL = 'chatload-sim';
const TIMEOUT = { timeout: 60_000 };
const QUERIES = `vllm:prefix_cache_queries_total{model_name="${MODEL}"}`;
const HITS = `vllm:prefix_cache_hits_total{model_name="${MODEL}"}`;
const SUCCESS_STOP = `vllm:request_success_total{model_name="${MODEL}",finished_reason="stop"}`;
const SUCCESS_LENGTH = `vllm:request_success_total{model_name="${MODEL}",finished_reason="length"}`;

interface Message {
  role: string;
  content: string;
}

/** One chat request; resolves with the serving replica (from the header), the answer and the status. */
async function chat(url: string, messages: readonly Message[], options: { session?: string; stream?: boolean; path?: string } = {}): Promise<{ replica: number; answer: string; status: number }> {
  const res = await fetch(`${url}${options.path ?? '/v1/chat/completions'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(options.session === undefined ? {} : { 'x-session-id': options.session }) },
    body: JSON.stringify({ model: MODEL, messages, max_tokens: 8, stream: options.stream ?? false }),
    signal: AbortSignal.timeout(30_000),
  });
  const header = res.headers.get(REPLICA_HEADER);
  const text = await res.text();
  const answer = res.status === 200 && options.stream !== true ? (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content : text;
  return { replica: header === null ? -1 : Number(header), answer, status: res.status };
}

async function page(url: string, path = '/metrics'): Promise<string> {
  const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(30_000) });
  assert.equal(res.status, 200, path);
  return res.text();
}

/** Runs `body` against a simulator of `replicas` replicas behind `router`, closing it after. */
async function withSim<T>(options: { replicas: number; router: RouterKind; seed?: number; tracePath?: string }, body: (sim: RunningSimulator) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ profile: 'cpu-tiny', ...options });
  try {
    return await body(sim);
  } finally {
    await sim.close();
  }
}

/** A distinct first user message of about `words` words (unrelated prompts share no block). */
function prompt(tag: string, words = 60): Message[] {
  return [{ role: 'user', content: Array.from({ length: words }, (_, i) => `${tag}${i}`).join(' ') }];
}

/**
 * Plays `conversations` conversations of `turns` turns each, a turn of every conversation before the next turn of any
 * (so consecutive requests belong to different conversations, as a load of many clients interleaves them). Returns the
 * replicas each conversation's turns went to.
 */
async function playConversations(url: string, conversations: number, turns: number, withSession: boolean): Promise<number[][]> {
  const histories = Array.from({ length: conversations }, (_, c) => [{ role: 'system', content: `You are assistant ${c}.` }, ...prompt(`c${c}w`)]);
  const replicas: number[][] = histories.map(() => []);
  for (let t = 0; t < turns; t++) {
    for (let c = 0; c < conversations; c++) {
      const out = await chat(url, histories[c]!, withSession ? { session: `conv-${c}` } : {});
      assert.equal(out.status, 200);
      replicas[c]!.push(out.replica);
      histories[c]!.push({ role: 'assistant', content: out.answer }, { role: 'user', content: `turn ${t + 1} of conversation ${c}: go on` });
    }
  }
  return replicas;
}

describe('simulator replicas and routers', () => {
  test('round-robin: requests spread evenly, the header names the replica, on chat, completions and responses, streamed or not', TIMEOUT, async () => {
    await withSim({ replicas: 4, router: 'round-robin' }, async (sim) => {
      const seen: number[] = [];
      for (let i = 0; i < 12; i++) seen.push((await chat(sim.url, prompt(`rr${i}`, 5), { stream: i % 2 === 1 })).replica);
      assert.deepEqual(seen, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
      const completion = await fetch(`${sim.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'hi there', max_tokens: 3 }) });
      await completion.text();
      assert.equal(completion.headers.get(REPLICA_HEADER), '0');
      const response = await fetch(`${sim.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'hi there', max_output_tokens: 3 }) });
      await response.text();
      assert.equal(response.headers.get(REPLICA_HEADER), '1');
      // The router refuses a bad body before any replica sees it: no replica header on that error.
      const refused = await fetch(`${sim.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": "other", "messages": []}' });
      await refused.text();
      assert.equal(refused.status >= 400, true);
      assert.equal(refused.headers.get(REPLICA_HEADER), null);
    });
  });

  test('random: seeded, so the same seed picks the same replicas and another seed does not', TIMEOUT, async () => {
    const picks = (seed: number): Promise<number[]> =>
      withSim({ replicas: 4, router: 'random', seed }, async (sim) => {
        const out: number[] = [];
        for (let i = 0; i < 24; i++) out.push((await chat(sim.url, prompt(`rnd${i}`, 5))).replica);
        return out;
      });
    const first = await picks(7);
    assert.deepEqual(await picks(7), first);
    assert.notDeepEqual(await picks(8), first);
    assert.ok(new Set(first).size > 1, `random over 4 replicas used only ${JSON.stringify([...new Set(first)])}`);
  });

  test('sticky: every turn of a session stays on one replica, sessions spread; without the header, the least loaded', TIMEOUT, async () => {
    await withSim({ replicas: 4, router: 'sticky' }, async (sim) => {
      // 7 sessions: coprime with 4, so a router that ignored the header would move them turn to turn.
      const perConversation = await playConversations(sim.url, 7, 3, true);
      for (const replicas of perConversation) assert.equal(new Set(replicas).size, 1, `a session moved: ${JSON.stringify(replicas)}`);
      assert.ok(new Set(perConversation.map((r) => r[0])).size > 1, 'all sessions on one replica');
      // No header: an idle fleet is taken in turn (least loaded, ties in turn), not all on replica 0.
      const headerless: number[] = [];
      for (let i = 0; i < 4; i++) headerless.push((await chat(sim.url, prompt(`nh${i}`, 5))).replica);
      assert.equal(new Set(headerless).size, 4, JSON.stringify(headerless));
    });
  });

  test("prefix: a conversation's next turn goes to the replica holding its prefix; unrelated prompts spread", TIMEOUT, async () => {
    await withSim({ replicas: 4, router: 'prefix' }, async (sim) => {
      // No session header: only the KV caches' contents can keep a conversation together.
      const perConversation = await playConversations(sim.url, 5, 3, false);
      for (const replicas of perConversation) assert.equal(new Set(replicas).size, 1, `a conversation moved: ${JSON.stringify(replicas)}`);
      assert.equal(new Set(perConversation.map((r) => r[0])).size, 4, `5 unrelated first turns should use all 4 replicas: ${JSON.stringify(perConversation)}`);
    });
  });

  test('per-replica pages count only their own requests; the router page is their sum; the trace names each replica', TIMEOUT, async () => {
    const tracePath = join(tempDir('replicas'), 'trace.jsonl');
    await withSim({ replicas: 3, router: 'round-robin', tracePath }, async (sim) => {
      const served = [0, 0, 0];
      for (let i = 0; i < 7; i++) served[(await chat(sim.url, prompt(`m${i}`, 10 + i))).replica]! += 1;
      assert.deepEqual(served, [3, 2, 2]);
      const router = await page(sim.url);
      const pages = await Promise.all([0, 1, 2].map((i) => page(sim.url, `/replicas/${i}/metrics`)));
      const finished = (text: string): number => metricValue(text, SUCCESS_STOP)! + metricValue(text, SUCCESS_LENGTH)!;
      assert.deepEqual(pages.map(finished), served);
      for (const series of [QUERIES, HITS, SUCCESS_STOP, SUCCESS_LENGTH, `vllm:generation_tokens_total{model_name="${MODEL}"}`]) {
        const sum = pages.reduce((total, text) => total + metricValue(text, series)!, 0);
        assert.equal(metricValue(router, series), sum, series);
      }
      assert.ok(metricValue(pages[1]!, QUERIES)! > 0 && metricValue(pages[1]!, QUERIES)! < metricValue(router, QUERIES)!);
      assert.match(router, /^chatload_sim_replicas 3$/m);
      const blocks = (text: string): number => Number(/num_gpu_blocks="(\d+)"/.exec(text)![1]);
      assert.equal(blocks(router), 3 * blocks(pages[0]!));
      assert.equal((await fetch(`${sim.url}/replicas/3/metrics`)).status, 404);
    });
    const lines = readFileSync(tracePath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as TraceLine);
    assert.deepEqual(lines.map((l) => l.replica).sort(), [0, 0, 0, 1, 1, 2, 2]);
  });

  test('shared in front of the replicas: faults strike in arrival order with the replica header on them; the Responses store serves any replica', TIMEOUT, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny', replicas: 2, router: 'round-robin', faults: '500=1' });
    try {
      const failed = await chat(sim.url, prompt('f', 5));
      assert.equal(failed.status, 500);
      assert.equal(failed.replica, 0, 'an injected fault is the serving replica\'s answer');
    } finally {
      await sim.close();
    }
    await withSim({ replicas: 2, router: 'round-robin' }, async (s) => {
      const post = async (body: object): Promise<{ replica: number; json: { id: string; usage: { input_tokens: number } } }> => {
        const res = await fetch(`${s.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, max_output_tokens: 4, ...body }) });
        assert.equal(res.status, 200);
        return { replica: Number(res.headers.get(REPLICA_HEADER)), json: (await res.json()) as { id: string; usage: { input_tokens: number } } };
      };
      const first = await post({ input: 'remember the word pineapple', store: true });
      const second = await post({ input: 'which word?', previous_response_id: first.json.id });
      assert.notEqual(second.replica, first.replica, 'round-robin sent the continuation elsewhere');
      assert.ok(second.json.usage.input_tokens > first.json.usage.input_tokens, 'the stored history was found on the other replica');
    });
  });

  test('the cache truth: round-robin over 4 replicas hits the prefix cache clearly less than sticky on a multi-turn load', TIMEOUT, async () => {
    const hits = (router: RouterKind): Promise<{ hits: number; queries: number }> =>
      withSim({ replicas: 4, router }, async (sim) => {
        await playConversations(sim.url, 5, 4, true);
        const text = await page(sim.url);
        return { hits: metricValue(text, HITS)!, queries: metricValue(text, QUERIES)! };
      });
    const roundRobin = await hits('round-robin');
    const sticky = await hits('sticky');
    // The same conversations (answers depend on the prompt, not the replica), so the same prompt tokens.
    assert.equal(roundRobin.queries, sticky.queries);
    // Sticky finds each turn's history where the turn before left it; round-robin mostly elsewhere.
    assert.ok(roundRobin.hits * 2 < sticky.hits, `round-robin ${roundRobin.hits} hits, sticky ${sticky.hits} (of ${sticky.queries})`);
  });
});
