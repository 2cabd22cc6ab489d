// The approximate tokenizer is linear (issue #14: it was quadratic, 20.9 s for 4 MB) and counting in slices is exact.
// Properties, not timings: a count is additive over texts cut where countTextYielding cuts (before a whitespace run),
// so counting a text of n copies is n times the count of one; and the characters the special-token search reads while
// a text is counted stay within twice its length (the search that made it quadratic).
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

  test('the scan reads each character a bounded number of times (1,000,000-character texts)', () => {
    // The search for the next special token (`<|`) once re-read the rest of the text at every piece: quadratic
    // (issue #16). Here every character String.prototype.indexOf reads while a text is counted is summed (the
    // distance from where a search starts to where it stops), and must stay within twice the text's length.
    const texts = ['word '.repeat(200_000), 'a'.repeat(1_000_000), `${'<'.repeat(100_000)}<|x|>`, `${'a, b. '.repeat(150_000)}<|end|>`];
    const indexOf = String.prototype.indexOf;
    let read = 0;
    String.prototype.indexOf = function (this: string, search: string, from = 0) {
      const at = indexOf.call(this, search, from);
      read += (at < 0 ? this.length : at) - Math.max(0, from);
      return at;
    };
    const counts: number[] = [];
    try {
      for (const text of texts) {
        read = 0;
        counts.push(approxTokenizer.count(text));
        assert.ok(read <= 2 * text.length, `${read} characters read by indexOf for a text of ${text.length}`);
      }
    } finally {
      String.prototype.indexOf = indexOf;
    }
    // And the counts: a token per word and per space, a token per 4 letters, a `<` each, the special one token.
    assert.deepEqual(counts.slice(0, 2), [400_000, 250_000]);
    assert.ok(counts[2]! <= 100_000 / 4 + 2);
  });
});
