import type { Tokenizer } from '../tokenizer/types.js';

/*
 * Prompt text for trace replay (Mooncake, Bailian): each hash id of a request becomes a block of exactly `blockSize`
 * tokens under the run's tokenizer, the same block for the same id and (almost surely) different blocks for different
 * ids, so the server's prefix cache sees the trace's real sharing.
 *
 * How exactness holds: a block is `blockSize` words, each a short lowercase word with a leading space (" cat").
 * The vocabulary keeps only the words that are one token in that spaced form under the tokenizer, checked by
 * encoding `a w` against `a` (byte-level BPE: `Ġcat`; SentencePiece: `▁cat`). Byte-level BPE tokenizers (GPT-2,
 * cl100k, Qwen, Llama-3) pre-split text before each space, so no merge can cross from one word into the next and a
 * sequence of n such words is n tokens, whatever the neighbours. The constructor checks that on a sample (`exact`).
 * Block texts are derived from (seed, hash id) alone by a stateless integer hash, so they cost no memory and
 * no state: any part of a run (worker thread, shard) makes the same text for the same id.
 */

/** Short words, most of them one token with a leading space in common vocabularies (the vocabulary keeps those that are). */
const WORDS = (
  'the cat dog sun sky sea map key box car bus jet cup pen ink oak elm ivy fig yam pea tea jam egg hen owl bee ant ' +
  'elk fox cow pig ram bat rat eel cod ray gem ore tin toy art act age aim air arc arm ash bay bed bid bow cab cap ' +
  'day dew dot dry ear end eye fan far fat few fit fix fly fog fun fur gap gas gun guy hat hay hip hit hot hub hug ' +
  'ice ill job joy kid kit lab lap law lay leg let lid lip lit log lot low mad man mat mix mob mud net new nod nor ' +
  'nut odd off oil old one out owe own pad pan pat paw pay pet pie pin pit pop pot put raw red rib rid rod row rub ' +
  'rug run sad saw say set sew shy sin sip sit six ski sly sob son spy sum tab tag tan tap tax ten tie tip toe top ' +
  'tow try tub two use van vet war wax web wet who why wig win wit won yes yet zip zoo'
).split(' ');

/** Fewer usable words than this and blocks would repeat too easily: the vocabulary is refused. */
const MIN_WORDS = 32;

/** One murmur3 mixing round of `v` into `h`. */
function round(h: number, v: number): number {
  h = Math.imul(h ^ v, 0xcc9e2d51);
  h = (h << 15) | (h >>> 17);
  return Math.imul(h, 0x1b873593);
}

/** The state of a block after its id: mixed once per block, then once per word (the per-request cost is the words). */
function blockState(seed: number, id: number): number {
  return round(round((seed ^ 0x9e3779b9) >>> 0, Math.floor(id / 0x100000000) >>> 0), id >>> 0);
}

/** A 32-bit integer mix (murmur3's round and finalizer): the word at position `i` of a block whose state is `state`. */
function mix(state: number, i: number): number {
  let h = round(state, i);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Makes prompt text from hash blocks under one tokenizer. */
export class HashBlockText {
  /** The words used, each with its leading space. */
  readonly words: readonly string[];
  /** True when the check on a sample found every block exactly `blockSize` tokens, joined or alone. */
  readonly exact: boolean;
  readonly #seed: number;

  constructor(tokenizer: Tokenizer, seed = 0) {
    this.#seed = seed | 0;
    const lead = tokenizer.encode('a');
    const words: string[] = [];
    for (const w of WORDS) {
      const joined = tokenizer.encode(`a ${w}`);
      if (joined.length === lead.length + 1 && lead.every((id, i) => joined[i] === id)) words.push(` ${w}`);
    }
    // A tokenizer that merges none of them (unlikely) still gets text, without exact counts.
    this.words = words.length >= MIN_WORDS ? words : WORDS.map((w) => ` ${w}`);
    this.exact = words.length >= MIN_WORDS && this.#check(tokenizer);
  }

  /**
   * Encodes a sample of joined blocks after some text and checks every word is one token. (At the very start of a
   * text a SentencePiece tokenizer may add one token for the leading space: a constant offset, see docs/DATASETS.md.)
   */
  #check(tokenizer: Tokenizer): boolean {
    const sample = [1, 2, 3, 4, 1, 5].map((id) => this.block(id, 64)).join('');
    return tokenizer.count(`a${sample}`) === tokenizer.count('a') + 6 * 64 && tokenizer.count(`x\n${this.block(7, 16)}`) === tokenizer.count('x\n') + 16;
  }

  /** The text of hash block `id`: `tokens` words (a block is trimmed to fewer at the end of a prompt). */
  block(id: number, tokens: number): string {
    const words = this.words;
    const n = words.length;
    const state = blockState(this.#seed, id);
    let text = '';
    for (let i = 0; i < tokens; i++) text += words[mix(state, i) % n]!;
    return text;
  }

  /** The prompt of `inputLength` tokens made of the blocks of `hashIds`, `blockSize` tokens each (the last one trimmed). */
  prompt(hashIds: readonly number[], inputLength: number, blockSize: number): string {
    const parts: string[] = [];
    let left = inputLength;
    for (let b = 0; b < hashIds.length && left > 0; b++) {
      const n = Math.min(blockSize, left);
      parts.push(this.block(hashIds[b]!, n));
      left -= n;
    }
    return parts.join('');
  }
}
