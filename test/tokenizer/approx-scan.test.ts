// The approximate tokenizer finds each piece's end with RegExp.test rather than exec (issue 17, part 4: half the
// cost per token). The ids must be exactly those of the exec-based scan it replaced, which is kept here as the oracle.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { approxTokenizer, DecodingApproxTokenizer } from '../../src/tokenizer/approx.js';
import { IdSink } from '../../src/tokenizer/id-sink.js';

const SPECIAL = /<\|[A-Za-z0-9_]+\|>/y;
const PIECE = /'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/uy;

/** The scan as it was before (exec), returning the token spans' texts. */
function execSpans(text: string): string[] {
  const spans: string[] = [];
  let pos = 0;
  let special = -1;
  while (pos < text.length) {
    if (text.charCodeAt(pos) === 60) {
      SPECIAL.lastIndex = pos;
      if (SPECIAL.test(text)) {
        spans.push(text.slice(pos, SPECIAL.lastIndex));
        pos = SPECIAL.lastIndex;
        continue;
      }
    }
    PIECE.lastIndex = pos;
    const match = PIECE.exec(text);
    const end = match && PIECE.lastIndex > pos ? PIECE.lastIndex : pos + 1;
    if (special !== Infinity && special < pos + 1) {
      special = text.indexOf('<|', pos + 1);
      if (special === -1) special = Infinity;
    }
    const pieceEnd = special < end ? special : end;
    let start = pos;
    while (start < pieceEnd) {
      let stop = Math.min(start + 4, pieceEnd);
      const c = text.charCodeAt(stop - 1);
      if (stop < pieceEnd && c >= 0xd800 && c <= 0xdbff) stop -= 1;
      if (stop === start) stop = start + 2;
      spans.push(text.slice(start, stop));
      start = stop;
    }
    pos = pieceEnd;
  }
  return spans;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

test('approx tokenizer: the same ids as the exec-based scan, on prose, chat markup and arbitrary text', () => {
  const samples = [
    "<|im_start|>user\nHello, world! It's 2026; don't   panic.\n\n<|im_end|>\n<|im_start|>assistant\n",
    'naïve café 😀😀 中文字符 1234567 -- «quotes» <|not special <|a|><|b|>x<|',
    '\t\t  \n  trailing   ',
  ];
  for (const s of samples) assert.deepEqual(approxTokenizer.encode(s), execSpans(s).map(fnv1a), s);
  const piece = fc.constantFrom('<|im_start|>', '<|end|>', '<|', '|>', "'s", "'ll", ' ', '  ', '\n', 'word', '12', '😀', 'é', '.', '!!');
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
    { numRuns: 2000 },
  );
});
