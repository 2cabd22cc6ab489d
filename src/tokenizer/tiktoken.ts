import type { Tokenizer } from './types.js';

/** The OpenAI encodings chatload ships (through gpt-tokenizer). */
export const TIKTOKEN_ENCODINGS = ['cl100k_base', 'o200k_base'] as const;

/** One of TIKTOKEN_ENCODINGS. */
export type TiktokenEncodingName = (typeof TIKTOKEN_ENCODINGS)[number];

interface EncodingModule {
  encode(text: string, options?: { allowedSpecial?: Set<string> | 'all' }): number[];
  decode(ids: Iterable<number>): string;
}

/**
 * An OpenAI encoding (`tiktoken:cl100k_base`, `tiktoken:o200k_base`) through gpt-tokenizer. Special-token markup in
 * the text is encoded as the special token (as a server applying its own template does), never rejected.
 */
export class TiktokenTokenizer implements Tokenizer {
  readonly name: string;
  readonly exact = true;
  readonly #encoding: EncodingModule;

  private constructor(name: TiktokenEncodingName, encoding: EncodingModule) {
    this.name = `tiktoken:${name}`;
    this.#encoding = encoding;
  }

  /** Loads an encoding (the module holds its ranks; loading takes a fraction of a second). */
  static async load(name: TiktokenEncodingName): Promise<TiktokenTokenizer> {
    const module = (name === 'cl100k_base'
      ? await import('gpt-tokenizer/encoding/cl100k_base')
      : await import('gpt-tokenizer/encoding/o200k_base')) as unknown as EncodingModule;
    return new TiktokenTokenizer(name, module);
  }

  encode(text: string): number[] {
    return this.#encoding.encode(text, { allowedSpecial: 'all' });
  }

  count(text: string): number {
    return this.encode(text).length;
  }

  decode(ids: readonly number[]): string {
    return this.#encoding.decode(ids);
  }
}
