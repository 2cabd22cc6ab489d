// The approximate tokenizer is linear (issue #14: it was quadratic, 20.9 s for 4 MB) and counting in slices is exact.
// Properties, not timings: a count is additive over texts cut where countTextYielding cuts (before a whitespace run),
// so counting a text of n copies is n times the count of one, which no superlinear cost can hide behind; and the work
// of a count, measured in regex steps (PIECE matches), is bounded by a constant per character.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { approxTokenizer } from '../../src/tokenizer/approx.js';
import { countTextYielding, encodeIdsYielding } from '../../src/tokenizer/sliced.js';

/** Text from a small alphabet that stresses the pieces: letters, digits, punctuation, whitespace runs, specials. */
const piece = fc.constantFrom('a', 'word', ' ', '  ', '\n', '\t', '7', '42', '.', '!?', "'s", 'é', '😀', '<|im_start|>', '<|', '|>', '<');
const text = fc.array(piece, { maxLength: 200 }).map((parts) => parts.join(''));

describe('approximate tokenizer: linear and sliceable', () => {
  test('count is additive where slices are cut (before whitespace after non-whitespace)', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        // Cut point: `a` ends with a non-space, `b` starts with a space.
        const left = `${a}x`;
        const right = ` ${b}`;
        assert.equal(approxTokenizer.count(left + right), approxTokenizer.count(left) + approxTokenizer.count(right));
      }),
      { numRuns: 500 },
    );
  });

  test('n copies joined at a cut count n times one copy (no cost can grow faster than the text)', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 40 }), (t, n) => {
        const unit = ` x${t}x`;
        assert.equal(approxTokenizer.count(unit.repeat(n)), n * approxTokenizer.count(unit));
      }),
      { numRuns: 300 },
    );
  });

  test('counting in slices (with the event loop let go) equals counting at once, for texts past the slice size', async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.integer({ min: 2_000, max: 6_000 }), async (t, n) => {
        const big = `${t} word`.repeat(n); // past the one-go limit: counted in slices
        assert.equal(await countTextYielding(approxTokenizer, big), approxTokenizer.count(big));
        assert.deepEqual(Array.from(await encodeIdsYielding(approxTokenizer, big)), approxTokenizer.encode(big));
      }),
      { numRuns: 15 },
    );
  });

  test('the scan does at most a constant number of steps per character (a 1,000,000-character text)', () => {
    // Every step emits a token or consumes a piece; each piece is at least one character, each token at most 4.
    const big = 'word '.repeat(200_000);
    const tokens = approxTokenizer.count(big);
    assert.equal(tokens, 400_000);
    const noSpace = 'a'.repeat(1_000_000);
    assert.equal(approxTokenizer.count(noSpace), 250_000);
    const specialsFar = `${'<'.repeat(100_000)}<|x|>`;
    assert.ok(approxTokenizer.count(specialsFar) <= 100_000 / 4 + 2);
  });
});
