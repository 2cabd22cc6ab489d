// The approximate tokenizer finds each piece's end with RegExp.test rather than exec (issue 17, part 4: half the
// cost per token), and by hand over ASCII. The ids must be exactly those of the exec-based scan it replaced, kept as
// the oracle in test/helpers/approx-reference.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { approxTokenizer, DecodingApproxTokenizer } from '../../src/tokenizer/approx.js';
import { IdSink } from '../../src/tokenizer/id-sink.js';
import { execSpans, fnv1a } from '../helpers/approx-reference.js';

test('approx tokenizer: the same ids as the exec-based scan, on prose, chat markup and arbitrary text', () => {
  const samples = [
    "<|im_start|>user\nHello, world! It's 2026; don't   panic.\n\n<|im_end|>\n<|im_start|>assistant\n",
    'naïve café 😀😀 中文字符 1234567 -- «quotes» <|not special <|a|><|b|>x<|',
    '\t\t  \n  trailing   ',
  ];
  for (const s of samples) assert.deepEqual(approxTokenizer.encode(s), execSpans(s).map(fnv1a), s);
  // ASCII's edges for the hand-written path (each apostrophe form, every ASCII space, controls, runs of each class
  // meeting each other), and what sends it to the regex (letters, digits, spaces and symbols outside ASCII).
  const piece = fc.constantFrom(
    '<|im_start|>', '<|end|>', '<|', '|>', '<', "'s", "'d", "'m", "'t", "'ll", "'ve", "'re", "'l", "'v", "'r", "'S", "'", "''",
    ' ', '  ', '\n', '\t', '\r', '\v', '\f', ' \n', 'word', 'W', 'x', '12', '7', '.', '!!', '-', '_', '\u0001', '\u007f', '~',
    '😀', 'é', 'É', '中', '\u00a0', '\u3000', '\u2028', '—', '٣', '\ufeff',
  );
  const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.array(piece, { maxLength: 30 }).map((p) => p.join('')));
  fc.assert(
    fc.property(text, (s) => {
      const spans = execSpans(s);
      const ids = spans.map(fnv1a);
      assert.deepEqual(approxTokenizer.encode(s), ids);
      assert.equal(approxTokenizer.count(s), ids.length);
      // The other ways out of the one scan: into an IdSink, and remembering each chunk's text to decode it.
      const sink = new IdSink(4);
      approxTokenizer.encodeTo(s, sink);
      assert.deepEqual([...sink.ids.subarray(0, sink.length)], ids);
      const decoding = new DecodingApproxTokenizer();
      const viaSink = new IdSink(4);
      decoding.encodeTo(s, viaSink);
      assert.deepEqual([...viaSink.ids.subarray(0, viaSink.length)], ids);
      assert.deepEqual(decoding.encode(s), ids);
      assert.equal(decoding.decode(ids), spans.join(''));
    }),
    { numRuns: 5000 },
  );
});
