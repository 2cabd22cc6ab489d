import { ConfigError } from '../errors/index.js';
import { DecodingApproxTokenizer } from '../tokenizer/approx.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { counted } from '../util/plural.js';

/** Paragraph chunks are joined up to about this many characters before encoding (bounds BPE work per call). */
const CHUNK_CHARS = 8_000;

/** A tokenizer that can decode (the generator needs both directions). */
export type DecodingTokenizer = Tokenizer & { decode(ids: readonly number[]): string };

/** The tokenizer itself when it can decode; the decoding approximate tokenizer for `approx`; else a ConfigError. */
export function decodingTokenizer(tokenizer: Tokenizer): DecodingTokenizer {
  if (typeof tokenizer.decode === 'function') return tokenizer as DecodingTokenizer;
  if (tokenizer.name === 'approx') return new DecodingApproxTokenizer();
  throw new ConfigError(`the tokenizer ${tokenizer.name} cannot decode, so it cannot generate text of exact token lengths`);
}

/** Splits `text` at blank lines into chunks of about CHUNK_CHARS characters (paragraphs are never cut). */
function chunks(text: string): string[] {
  const paragraphs = text.split(/(?<=\n\n)/);
  const out: string[] = [];
  let current = '';
  for (const p of paragraphs) {
    if (current.length > 0 && current.length + p.length > CHUNK_CHARS) {
      out.push(current);
      current = '';
    }
    current += p;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * The corpus as one stream of token ids (every text tokenized without special tokens, as the reference does), read
 * with wrap-around: a slice past the end continues from the start, so a small corpus serves any dataset size.
 * Texts are tokenized a few paragraphs at a time, which bounds the work per call; generated messages are checked
 * by re-encoding anyway, so chunk joins never cost exactness.
 */
export class TokenStream {
  readonly tokenizer: DecodingTokenizer;
  readonly #ids: Int32Array | Uint32Array;

  constructor(tokenizer: DecodingTokenizer, texts: readonly string[]) {
    this.tokenizer = tokenizer;
    const all: number[] = [];
    for (const text of texts) for (const chunk of chunks(text)) for (const id of tokenizer.encode(chunk)) all.push(id);
    if (all.length < 16) throw new ConfigError(`the text files hold only ${counted(all.length, 'token')}; the generator needs a corpus of at least a few sentences`);
    // Approximate-tokenizer ids are 32-bit hashes; real vocabularies fit an Int32Array.
    this.#ids = all.some((id) => id > 0x7fffffff) ? Uint32Array.from(all) : Int32Array.from(all);
  }

  /** Tokens in the stream. */
  get length(): number {
    return this.#ids.length;
  }

  /** `count` ids from `start` (both wrap around the stream). */
  slice(start: number, count: number): number[] {
    const n = this.#ids.length;
    const out: number[] = [];
    let at = ((start % n) + n) % n;
    for (let i = 0; i < count; i++) {
      out.push(this.#ids[at]!);
      at += 1;
      if (at === n) at = 0;
    }
    return out;
  }

  /** The text of `count` tokens from `start`. */
  text(start: number, count: number): string {
    return count <= 0 ? '' : this.tokenizer.decode(this.slice(start, count));
  }
}

/** One part of a message being realized: fixed text, or `count` corpus tokens from `start`. */
export type Segment = { text: string } | { start: number; count: number };

/** A realized message: its text, its token count (re-encoded) and how far that is from the target. */
export interface Realized {
  text: string;
  tokens: number;
  /** tokens - target: 0 when exact; otherwise the residual join drift (or a target below the fixed parts). */
  drift: number;
}

/** At most this many re-encode rounds per message. Almost every message is exact after the first or second. */
const MAX_ROUNDS = 6;

/**
 * Builds the text of `segments` whose token count (re-encoded as a whole) equals `target`. The slice at index
 * `adjust` is lengthened or shortened by the measured difference until the count matches; when rounds oscillate
 * (a join that merges differently each time) the closest attempt wins. This is where exactness comes from:
 * decoding a slice and re-encoding it can shift counts at the joins, and this loop measures instead of assuming.
 */
export function realize(stream: TokenStream, segments: Segment[], adjust: number, target: number): Realized {
  const parts = segments.map((s) => ('text' in s ? s.text : ''));
  const render = (): string => parts.join('');
  const slice = segments[adjust];
  if (slice === undefined || 'text' in slice) {
    const text = segments.map((s) => ('text' in s ? s.text : stream.text(s.start, s.count))).join('');
    const tokens = stream.tokenizer.count(text);
    return { text, tokens, drift: tokens - target };
  }
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (!('text' in s) && i !== adjust) parts[i] = stream.text(s.start, s.count);
  }
  let count = Math.max(0, slice.count);
  let best: Realized | undefined;
  const tried = new Set<number>();
  for (let round = 0; round < MAX_ROUNDS && !tried.has(count); round++) {
    tried.add(count);
    parts[adjust] = stream.text(slice.start, count);
    const text = render();
    const tokens = stream.tokenizer.count(text);
    const drift = tokens - target;
    if (best === undefined || Math.abs(drift) < Math.abs(best.drift)) best = { text, tokens, drift };
    if (drift === 0) break;
    const next = count - drift;
    if (next < 0) {
      if (count === 0) break;
      count = 0;
    } else count = next;
  }
  return best!;
}
