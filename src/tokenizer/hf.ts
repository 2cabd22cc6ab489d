import { Tokenizer as HfCoreTokenizer } from '@huggingface/tokenizers';
import type { Tokenizer } from './types.js';

/** The parts of a `tokenizer.json` this module looks at (the library reads the rest). */
interface TokenizerJsonShape {
  normalizer?: { type?: string; normalizers?: { type?: string; prepend?: string; pattern?: { String?: string }; content?: string }[] } | null;
  pre_tokenizer?: unknown;
  model?: { type?: string; vocab?: Record<string, number> | unknown[] };
  added_tokens?: { content: string }[];
}

/** Words longer than this are not cached (they are rare and would bloat the cache). */
const MAX_CACHED_WORD = 64;
/** The word cache is cleared when it reaches this many entries (a simple bound; English text has far fewer distinct words). */
const WORD_CACHE_LIMIT = 200_000;

/**
 * True for SentencePiece-style BPE tokenizers (Llama-2, Mistral): the normalizer is `Prepend("▁")` then
 * `Replace(" " -> "▁")`, there is no pre-tokenizer, and no vocabulary entry holds a `▁` after another character.
 * For these, BPE runs over the whole text as one word (slow in pure JS: superlinear in text length), yet no merge
 * can ever cross the boundary before a `▁`. So encoding word by word gives exactly the same ids, much faster.
 */
function isSplittableMetaspace(json: TokenizerJsonShape): boolean {
  if (json.pre_tokenizer !== null && json.pre_tokenizer !== undefined) return false;
  if (json.model?.type !== 'BPE') return false;
  const steps = json.normalizer?.type === 'Sequence' ? (json.normalizer.normalizers ?? []) : [];
  if (steps.length !== 2) return false;
  const [prepend, replace] = steps;
  if (prepend?.type !== 'Prepend' || prepend.prepend !== '▁') return false;
  if (replace?.type !== 'Replace' || replace.pattern?.String !== ' ' || replace.content !== '▁') return false;
  const vocab = json.model.vocab;
  if (vocab === undefined || Array.isArray(vocab)) return false;
  for (const token of Object.keys(vocab)) {
    const at = token.indexOf('▁', 1);
    if (at !== -1 && token.slice(0, at).replace(/▁/g, '') !== '') return false;
  }
  // Added tokens are split out before normalization; texts holding them take the library's full path.
  return true;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A Hugging Face `tokenizer.json` tokenizer (`@huggingface/tokenizers`, pure JS). `encode` adds no special tokens
 * (as vLLM does for chat requests: the chat template already holds them); special-token markup in the text is
 * recognised. SentencePiece-style tokenizers take an exact word-by-word fast path (see isSplittableMetaspace).
 */
export class HfTokenizer implements Tokenizer {
  readonly name: string;
  readonly exact = true;
  readonly #tok: HfCoreTokenizer;
  readonly #splitWords: boolean;
  readonly #added: RegExp | null;
  readonly #words = new Map<string, number[]>();

  /** `json` is the parsed tokenizer.json, `config` the parsed tokenizer_config.json (or `{}`). */
  constructor(name: string, json: object, config: object) {
    this.name = name;
    this.#tok = new HfCoreTokenizer(json, config);
    const shape = json as TokenizerJsonShape;
    this.#splitWords = isSplittableMetaspace(shape);
    const added = (shape.added_tokens ?? []).map((t) => t.content).filter((c) => c.length > 0);
    this.#added = added.length === 0 ? null : new RegExp(added.map(escapeRegex).join('|'));
  }

  encode(text: string): number[] {
    if (this.#splitWords && text.length > MAX_CACHED_WORD && (this.#added === null || !this.#added.test(text))) {
      return this.#encodeByWords(text);
    }
    return this.#tok.encode(text, { add_special_tokens: false }).ids;
  }

  count(text: string): number {
    return this.encode(text).length;
  }

  decode(ids: readonly number[]): string {
    return this.#tok.decode(ids as number[], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  /**
   * The fast path. The text is cut before every space that follows a non-space and precedes more text. The first
   * piece is encoded as is; every later piece without its first space, because the normalizer prepends `▁` to each
   * piece, which restores exactly the `▁` that the space became in the whole text.
   */
  #encodeByWords(text: string): number[] {
    const out: number[] = [];
    let start = 0;
    let first = true;
    const n = text.length;
    let i = 1;
    while (i <= n) {
      let cut = n;
      for (; i < n; i++) {
        if (text.charCodeAt(i) === 32 && text.charCodeAt(i - 1) !== 32) {
          let j = i;
          while (j < n && text.charCodeAt(j) === 32) j++;
          if (j < n) {
            cut = i;
            break;
          }
        }
      }
      const piece = first ? text.slice(start, cut) : text.slice(start + 1, cut);
      for (const id of this.#encodeWord(piece)) out.push(id);
      first = false;
      start = cut;
      i = cut + 1;
      if (cut === n) break;
    }
    return out;
  }

  #encodeWord(piece: string): number[] {
    if (piece.length === 0) return [];
    const cacheable = piece.length <= MAX_CACHED_WORD;
    if (cacheable) {
      const hit = this.#words.get(piece);
      if (hit !== undefined) return hit;
    }
    const ids = this.#tok.encode(piece, { add_special_tokens: false }).ids;
    if (cacheable) {
      if (this.#words.size >= WORD_CACHE_LIMIT) this.#words.clear();
      this.#words.set(piece, ids);
    }
    return ids;
  }
}
