import { approxTokenizer } from '../tokenizer/index.js';

/*
 * The simulator's generated text. Every word has three lowercase letters; the first token of an answer is the bare
 * word, later ones carry a leading space. Under the approximate tokenizer each of these is exactly one token
 * (` ?\p{L}+` then chunks of at most 4 code units), so an answer of N tokens re-encodes to the same N ids when the
 * client sends it back in the next turn's history. That is what makes prefix caching across turns real.
 */
const WORDS = [
  'the', 'cat', 'dog', 'sun', 'sky', 'sea', 'map', 'key', 'box', 'car', 'bus', 'jet', 'cup', 'pen', 'ink', 'oak',
  'elm', 'ivy', 'fig', 'yam', 'pea', 'tea', 'jam', 'egg', 'hen', 'owl', 'bee', 'ant', 'elk', 'fox', 'cow', 'pig',
  'ram', 'bat', 'rat', 'eel', 'cod', 'ray', 'gem', 'ore', 'tin', 'toy', 'art', 'act', 'age', 'aim',
  'air', 'arc', 'arm', 'ash', 'bay', 'bed', 'bid', 'bow', 'cab', 'cap', 'day', 'dew', 'dot', 'dry', 'ear', 'end',
] as const;

/** Number of distinct words (the vocabulary of generated text). */
export const WORD_COUNT = WORDS.length;

/** Text of word `w` at answer position `position` (0 = first token of the answer: no leading space). */
export function wordText(w: number, position: number): string {
  return position === 0 ? WORDS[w]! : ` ${WORDS[w]!}`;
}

const BARE_IDS = WORDS.map((w) => approxTokenizer.encode(w)[0]!);
const SPACED_IDS = WORDS.map((w) => approxTokenizer.encode(` ${w}`)[0]!);

/** The approximate-tokenizer id of word `w` at answer position `position` (see wordText). */
export function wordTokenId(w: number, position: number): number {
  return position === 0 ? BARE_IDS[w]! : SPACED_IDS[w]!;
}

/** A 32-bit mix of three integers (murmur3 finalizer style): the seeded, position-keyed word choice. */
export function mix3(a: number, b: number, c: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35) ^ Math.imul(c + 0x165667b1, 0x27d4eb2f);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The word index chosen for answer position `position` of a request keyed `requestKey` under simulator seed `seed`. */
export function chooseWord(seed: number, requestKey: number, position: number): number {
  return mix3(seed, requestKey, position) % WORD_COUNT;
}
