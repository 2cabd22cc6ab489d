// Benchmark: the global expected-cache model's memory and per-turn cost (issue #13).
// Workload: CONVERSATIONS conversations x TURNS user turns through ExpectedCache, CONCURRENT at a time, as
// bench/model-workload.ts drives it (a 500-token shared system prompt, ~60-token user turns and answers).
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
import { defaultTokenCounter } from '../src/tokenizer/index.js';
import { driveModel } from './model-workload.js';

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

const before = heap();
const model = new ExpectedCache(defaultTokenCounter, { blockSize: 16, capacityBlocks: CAPACITY });
const early: number[] = [];
const late: number[] = [];
let turnsDone = 0;
let cachedTokens = 0;
let promptTokens = 0;
const started = performance.now();
await driveModel(model, { conversations: CONVERSATIONS, turns: TURNS, concurrent: CONCURRENT }, ({ turn, ticket, us }) => {
  if (turn < 10) early.push(us);
  else if (turn >= TURNS - 10) late.push(us);
  cachedTokens += ticket.hit.expected;
  promptTokens += ticket.promptLength;
  turnsDone++;
});
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
