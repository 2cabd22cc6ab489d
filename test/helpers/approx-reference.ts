// The approximate tokenizer's rule as first written: every piece found by PIECE.exec, the regex of
// src/tokenizer/approx.ts. The oracle of test/tokenizer/approx-scan.test.ts and the baseline of
// bench/approx-tokenizer.ts: the shipped scan (RegExp.test, then a hand-written ASCII path) must give exactly its ids.
const SPECIAL = /<\|[A-Za-z0-9_]+\|>/y;
const PIECE = /'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/uy;

/** The scan as it was before (exec), returning the token spans' texts. */
export function execSpans(text: string): string[] {
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

/** The id of a token's text: 32-bit FNV-1a over its UTF-16 code units, as the tokenizer hashes it. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
