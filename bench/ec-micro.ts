// scratch: the expected-cache model's per-request cost in the startup bench's workload (in-process)
import { ExpectedCache } from '../src/engine/expected-cache.js';
import { defaultTokenCounter, type ChatMessage } from '../src/tokenizer/index.js';
import { syntheticConversations } from '../test/helpers/datasets.js';
const convs = syntheticConversations({ count: 250, userTurns: () => 6, prefixWords: 150, userWords: 40, answerWords: 60 });
const WORDS = ['cod', ' ore', ' bee', ' age', ' gem', ' sea', ' sky', ' oak', ' ant', ' elm'];
const tok = defaultTokenCounter.tokenizer;
const capacity = process.env.INF ? undefined : 4096;
function once(): Record<string, number> {
  const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, capacityBlocks: capacity });
  const t = { begin: 0, prefilled: 0, encodeAnswer: 0, end: 0, n: 0 };
  // 50 live conversations, round robin turn by turn (as -p 50)
  const live = convs.slice(0, 50).map((c) => ({ c, key: {}, history: [] as ChatMessage[], turn: 0 }));
  let next = 50; let seq = 0;
  while (live.length > 0 && t.n < 1000) {
    for (let i = live.length - 1; i >= 0 && t.n < 1000; i--) {
      const l = live[i]!;
      const users = l.c.messages.filter((m) => m.role === 'user');
      const messages = [...l.history, { role: 'user' as const, content: users[l.turn]!.content as string }];
      let answer = ''; for (let k = 0; k < 128; k++) answer += WORDS[(seq * 7 + k * 3) % WORDS.length]; seq++;
      let a = performance.now();
      // eslint-disable-next-line no-await-in-loop
      const ticketP = model.begin(l.key, messages, undefined);
      void ticketP.then(() => {});
      const ticket = (globalThis as any).__t;
      void ticket;
      t.begin += 0;
      // synchronous use below
      return { ...t, p: a } as never;
    }
  }
  return t;
}
void once;
// async version
async function run(): Promise<Record<string, number>> {
  const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, capacityBlocks: capacity });
  const t = { begin: 0, prefilled: 0, encodeAnswer: 0, end: 0, n: 0 };
  const live = convs.slice(0, 50).map((c) => ({ c, key: {}, history: [] as ChatMessage[], turn: 0 }));
  let next = 50; let seq = 0;
  while (t.n < 1000) {
    for (let i = live.length - 1; i >= 0 && t.n < 1000; i--) {
      const l = live[i]!;
      const users = l.c.messages.filter((m) => m.role === 'user');
      const messages = [...l.history, { role: 'user' as const, content: users[l.turn]!.content as string }];
      let answer = ''; for (let k = 0; k < 128; k++) answer += WORDS[(seq * 7 + k * 3) % WORDS.length]; seq++;
      let a = performance.now();
      const ticket = await model.begin(l.key, messages, undefined);
      let b = performance.now(); t.begin += b - a; a = b;
      model.prefilled(ticket, a);
      b = performance.now(); t.prefilled += b - a; a = b;
      const ids = tok.encode(answer);
      b = performance.now(); t.encodeAnswer += b - a; a = b;
      model.end(ticket, ids);
      b = performance.now(); t.end += b - a;
      t.n++;
      l.history = [...messages, { role: 'assistant', content: answer }];
      l.turn++;
      if (l.turn >= 6) { live[i] = { c: convs[next++ % convs.length]!, key: {}, history: [], turn: 0 }; }
    }
  }
  return t;
}
for (let r = 0; r < 5; r++) {
  const c0 = process.cpuUsage();
  const t = await run();
  const c = process.cpuUsage(c0);
  console.log(Object.entries(t).map(([k, v]) => `${k} ${k === 'n' ? v : ((v * 1000) / t.n).toFixed(1) + 'us'}`).join(' | '), `cpu/req ${((c.user + c.system) / t.n).toFixed(1)}us`);
}
