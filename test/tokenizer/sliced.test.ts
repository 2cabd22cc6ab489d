import assert from 'node:assert/strict';
import { test } from 'node:test';
import { approxTokenizer } from '../../src/tokenizer/approx.js';
import { PartsText } from '../../src/tokenizer/parts-text.js';
import { encodeIdsYielding } from '../../src/tokenizer/sliced.js';

/** Runs `work` with every slice after the first taking "a second" by the clock, so later slices are the smallest (4,096). */
async function withSmallestSlices<T>(work: () => Promise<T>): Promise<T> {
  let fake = 0;
  const own = Object.getOwnPropertyDescriptor(performance, 'now');
  performance.now = () => (fake += 1000);
  try {
    return await work();
  } finally {
    if (own === undefined) delete (performance as { now?: unknown }).now;
    else Object.defineProperty(performance, 'now', own);
  }
}

test('a long text whose end has no word boundary after a slice is not cut there: the same ids as whole', async () => {
  // Slices of 4,096 characters from 16k on reach the closing run (no whitespace, then a special token, as a piece
  // before a restart marker ends) with no place to cut before the end. A cut anyway split the run and shifted ids.
  const text = `${'a '.repeat(17000)}${'q'.repeat(3000)}<|im_end|>`;
  const want = approxTokenizer.encode(text);
  assert.deepEqual([...(await withSmallestSlices(() => encodeIdsYielding(approxTokenizer, text)))], want);
  const parts = new PartsText(['a '.repeat(17000), 'q'.repeat(3000), '<|im_end|>']);
  assert.deepEqual([...(await withSmallestSlices(() => encodeIdsYielding(approxTokenizer, parts)))], want);
});
