// The expected-cache model's workload in bench/expected-cache.ts and bench/replica-caches.ts: conversations through
// ExpectedCache (begin, first token, end) with the approximate tokenizer and ChatML, as the load drives it: a 500-token
// system prompt shared by all, then per turn a ~60-token user message and a ~60-token answer. Conversations run
// `concurrent` at a time, interleaved turn by turn, and are let go when they end (as the load's work pool does), so
// what stays is the index itself.
import type { ExpectedCache, ExpectedCacheTicket } from '../src/cache-model/expected-cache.js';
import { defaultTokenCounter, type ChatMessage } from '../src/tokenizer/index.js';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'river', 'stone', 'cloud', 'maple', 'orbit', 'lantern', 'copper', 'meadow', 'quartz', 'willow'];

/** ~2 tokens a word under the approximate tokenizer; seeded by (a, b) so every text differs. */
export function text(words: number, a: number, b: number): string {
  const out: string[] = [`${a}-${b}`];
  for (let i = 0; i < words; i++) out.push(WORDS[(i * 7 + a * 13 + b * 5 + ((i * (a + b)) % 11)) % WORDS.length]!);
  return out.join(' ');
}

/** The workload's size, and where each request goes (a replica's name: `ExpectedCache.routed`; undefined: none named). */
export interface ModelWorkload {
  conversations: number;
  turns: number;
  concurrent: number;
  route?: (conversation: number, turn: number) => string | undefined;
}

/** One request done: its conversation's turn (from 0), its ticket, and the µs of the model's work on it. */
export interface WorkloadTurn {
  turn: number;
  ticket: ExpectedCacheTicket;
  us: number;
}

/** Drives `model` through the workload, calling `onTurn` after each request's end. */
export async function driveModel(model: ExpectedCache, workload: ModelWorkload, onTurn: (done: WorkloadTurn) => void): Promise<void> {
  const system = text(250, 0, 0);
  const tokenizer = defaultTokenCounter.tokenizer;
  const live: Array<{ key: object; history: ChatMessage[]; turn: number; id: number }> = [];
  let nextId = 0;
  const open = (): void => {
    if (nextId < workload.conversations) live.push({ key: {}, history: [{ role: 'system', content: system }], turn: 0, id: nextId++ });
  };
  for (let i = 0; i < workload.concurrent; i++) open();
  while (live.length > 0) {
    for (let i = live.length - 1; i >= 0; i--) {
      const c = live[i]!;
      const messages = [...c.history, { role: 'user' as const, content: text(30, c.id, c.turn) }];
      const answer = text(30, c.id + 1_000_000, c.turn);
      const t0 = performance.now();
      const ticket = await model.begin(c.key, messages, 64);
      const replica = workload.route?.(c.id, c.turn);
      if (replica !== undefined) model.routed(ticket, replica);
      model.prefilled(ticket, t0);
      model.end(ticket, tokenizer.encode(answer));
      onTurn({ turn: c.turn, ticket, us: (performance.now() - t0) * 1000 });
      c.history = [...messages, { role: 'assistant', content: answer }];
      if (++c.turn >= workload.turns) {
        live.splice(i, 1);
        open();
      }
    }
  }
}
