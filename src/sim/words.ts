import { approxTokenizer, type Tokenizer } from '../tokenizer/index.js';

/*
 * The simulator's generated text. Every word has three lowercase letters; the first token of an answer is the bare
 * word, later ones carry a leading space. The engine appends one token id per word to the request's KV sequence, and
 * those ids must be the ones the next turn's prompt re-encodes to (the answer comes back in the history), or prefix
 * caching across turns would stop at the end of the previous prompt. So the vocabulary is built per tokenizer: only
 * the words whose bare and spaced forms are each exactly one token of it are used, with that tokenizer's ids.
 */
const WORDS = [
  'the', 'cat', 'dog', 'sun', 'sky', 'sea', 'map', 'key', 'box', 'car', 'bus', 'jet', 'cup', 'pen', 'ink', 'oak',
  'elm', 'ivy', 'fig', 'yam', 'pea', 'tea', 'jam', 'egg', 'hen', 'owl', 'bee', 'ant', 'elk', 'fox', 'cow', 'pig',
  'ram', 'bat', 'rat', 'eel', 'cod', 'ray', 'gem', 'ore', 'tin', 'toy', 'art', 'act', 'age', 'aim',
  'air', 'arc', 'arm', 'ash', 'bay', 'bed', 'bid', 'bow', 'cab', 'cap', 'day', 'dew', 'dot', 'dry', 'ear', 'end',
] as const;

/** Words in the list, before a tokenizer's vocabulary keeps its single-token ones. */
export const WORD_LIST_SIZE = WORDS.length;

/** Fewer single-token words than this and the vocabulary falls back to the approximate tokenizer's (see wordVocabulary). */
const MIN_WORDS = 8;

/** The words an engine generates, and the token id of each at each answer position. */
export interface WordVocabulary {
  /** Number of distinct words. */
  readonly size: number;
  /** The tokenizer whose ids these are (`approx` after a fallback). */
  readonly tokenizer: string;
  /** Text of word `w` at answer position `position` (0 = first token of the answer: no leading space). */
  text(w: number, position: number): string;
  /** The token id of word `w` at answer position `position`. */
  id(w: number, position: number): number;
}

/**
 * The vocabulary of generated words under `tokenizer`: the words whose bare form (`encode(w)`) and spaced form (the
 * tokens `encode('a ' + w)` adds after `encode('a')`, which is how a word continues text under both byte-level BPE,
 * `Ġcat`, and SentencePiece, `▁cat`) are each one token. With fewer than 8 such words it falls back to the
 * approximate tokenizer's vocabulary (every word qualifies there), and cross-turn cache hits then stop at the
 * previous prompt, as before this vocabulary existed.
 */
export function wordVocabulary(tokenizer: Tokenizer): WordVocabulary {
  const bare: number[] = [];
  const spaced: number[] = [];
  const words: string[] = [];
  const lead = tokenizer.encode('a');
  for (const w of WORDS) {
    const b = tokenizer.encode(w);
    const joined = tokenizer.encode(`a ${w}`);
    const s = startsWith(joined, lead) ? joined.slice(lead.length) : tokenizer.encode(` ${w}`);
    if (b.length !== 1 || s.length !== 1) continue;
    words.push(w);
    bare.push(b[0]!);
    spaced.push(s[0]!);
  }
  if (words.length < MIN_WORDS && tokenizer !== approxTokenizer) return APPROX_VOCABULARY;
  return {
    size: words.length,
    tokenizer: tokenizer.name,
    text: (w, position) => (position === 0 ? words[w]! : ` ${words[w]!}`),
    id: (w, position) => (position === 0 ? bare[w]! : spaced[w]!),
  };
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  return prefix.length <= ids.length && prefix.every((id, i) => ids[i] === id);
}

/** The approximate tokenizer's vocabulary: every word (each is one approx token by construction). */
export const APPROX_VOCABULARY: WordVocabulary = wordVocabulary(approxTokenizer);

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

/**
 * The word index (of a vocabulary of `size` words) chosen for answer position `position` of a request keyed
 * `requestKey` under simulator seed `seed`.
 */
export function chooseWord(seed: number, requestKey: number, position: number, size: number): number {
  return mix3(seed, requestKey, position) % size;
}
