import { approxTokenizer } from './approx.js';
import { chatmlTemplate } from './chatml.js';
import type { ChatMessage, ChatTemplate, Tokenizer } from './types.js';

export type { ChatMessage, ChatTemplate, Tokenizer } from './types.js';
export { ApproxTokenizer, approxTokenizer } from './approx.js';
export { chatmlTemplate } from './chatml.js';

/** A tokenizer with the chat template that goes with it: what both the client and the simulator count with. */
export interface TokenCounter {
  readonly tokenizer: Tokenizer;
  readonly template: ChatTemplate;
}

/** The default until real tokenizers land: the approximate tokenizer with ChatML. */
export const defaultTokenCounter: TokenCounter = { tokenizer: approxTokenizer, template: chatmlTemplate };

/** Prompt tokens of a chat request: the template applied to `messages` with the generation prompt, then encoded. */
export function encodePrompt(counter: TokenCounter, messages: readonly ChatMessage[]): number[] {
  return counter.tokenizer.encode(counter.template.apply(messages, { addGenerationPrompt: true }));
}

/** The number of prompt tokens of a chat request (see encodePrompt). */
export function countPromptTokens(counter: TokenCounter, messages: readonly ChatMessage[]): number {
  return counter.tokenizer.count(counter.template.apply(messages, { addGenerationPrompt: true }));
}
