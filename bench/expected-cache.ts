// Benchmark: the global expected-cache model's memory and per-turn cost (issue #13).
// Workload: CONVERSATIONS conversations x TURNS user turns through ExpectedCache (begin, first token, end) with the
// approximate tokenizer and ChatML, as the engine drives it: a 500-token system prompt shared by all, then per turn
// a ~60-token user message and a ~60-token answer. Conversations run CONCURRENT at a time, interleaved turn by turn,
// and are let go when they end (as the engine's work pool does), so what stays is the index itself.
// Figures:
//   - bytes per cached block: heap growth (after a forced GC, with ArrayBuffers: the index is typed arrays) over the
//     blocks the infinite index holds; the baseline is the heap before the run, in the same process;
//   - per-turn cost, ratio: the mean µs of the model's work per turn at turns 31-40 against turns 1-10 of the same
//     conversations (the history grows 8x; the work should stay flat: only the new tokens are encoded and hashed).
// With a capacity in blocks (third argument), the LRU index runs beside the infinite one, as with --kv-cache-tokens.
// Usage: node --import tsx bench/expected-cache.ts [conversations=10000] [turns=40] [capacityBlocks]
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Table from 'cli-table3';
import { ExpectedCache } from '../src/cache-model/expected-cache.js';
import { defaultTokenCounter, type ChatMessage } from '../src/tokenizer/index.js';

const CONVERSATIONS = Number(process.argv[2] ?? 10_000);
const TURNS = Number(process.argv[3] ?? 40);
const CAPACITY = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const CONCURRENT = 64;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = (): number => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'river', 'stone', 'cloud', 'maple', 'orbit', 'lantern', 'copper', 'meadow', 'quartz', 'willow'];
/** ~2 tokens a word under the approximate tokenizer; seeded by (a, b) so every text differs. */
function text(words: number, a: number, b: number): string {
  const out: string[] = [`${a}-${b}`];
  for (let i = 0; i < words; i++) out.push(WORDS[(i * 7 + a * 13 + b * 5 + ((i * (a + b)) % 11)) % WORDS.length]!);
  return out.join(' ');
}

const system = text(250, 0, 0);
const tokenizer = defaultTokenCounter.tokenizer;
const before = heap();
const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, capacityBlocks: CAPACITY });
const early: number[] = [];
const late: number[] = [];
let turnsDone = 0;
let cachedTokens = 0;
let promptTokens = 0;
const started = performance.now();

interface Live {
  key: object;
  history: ChatMessage[];
  turn: number;
  id: number;
}
let nextId = 0;
const live: Live[] = [];
const open = (): void => {
  if (nextId < CONVERSATIONS) live.push({ key: {}, history: [{ role: 'system', content: system }], turn: 0, id: nextId++ });
};
for (let i = 0; i < CONCURRENT; i++) open();
while (live.length > 0) {
  for (let i = live.length - 1; i >= 0; i--) {
    const c = live[i]!;
    const messages = [...c.history, { role: 'user' as const, content: text(30, c.id, c.turn) }];
    const answer = text(30, c.id + 1_000_000, c.turn);
    const t0 = performance.now();
    const ticket = await model.begin(c.key, messages, 64);
    model.prefilled(ticket, t0);
    model.end(ticket, tokenizer.encode(answer));
    const us = (performance.now() - t0) * 1000;
    if (c.turn < 10) early.push(us);
    else if (c.turn >= TURNS - 10) late.push(us);
    cachedTokens += ticket.hit.expected;
    promptTokens += ticket.promptLength;
    turnsDone++;
    c.history = [...messages, { role: 'assistant', content: answer }];
    c.turn++;
    if (c.turn >= TURNS) {
      live.splice(i, 1);
      open();
    }
  }
}
const elapsedS = (performance.now() - started) / 1000;
const after = heap();
const blocks = model.cachedBlocks;
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const table = new Table({ head: ['figure', 'value'], style: { head: [], border: [] } });
table.push(
  ['conversations x turns', `${CONVERSATIONS} x ${TURNS} (${turnsDone} turns, ${CONCURRENT} at a time)`],
  ['prompt tokens seen', promptTokens.toLocaleString('en')],
  ['capacity model', CAPACITY === undefined ? 'none (infinite only)' : `${CAPACITY.toLocaleString('en')} blocks, ${model.evictions.toLocaleString('en')} evictions`],
  ['expected hit ratio', `${((100 * cachedTokens) / promptTokens).toFixed(1)}%`],
  ['cached blocks (infinite index)', blocks.toLocaleString('en')],
  ['heap growth (after GC)', `${((after - before) / 1e6).toFixed(1)} MB`],
  ['bytes per cached block', ((after - before) / blocks).toFixed(1)],
  ['per-turn work, turns 1-10 (baseline)', `${mean(early).toFixed(1)} µs`],
  [`per-turn work, turns ${TURNS - 9}-${TURNS}`, `${mean(late).toFixed(1)} µs (ratio ${(mean(late) / mean(early)).toFixed(2)})`],
  ['wall time', `${elapsedS.toFixed(1)} s`],
);
console.log(table.toString());
