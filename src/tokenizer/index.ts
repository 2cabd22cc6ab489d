import { approxTokenizer } from './approx.js';
import { chatmlTemplate } from './chatml.js';
import type { ChatMessage, TokenCounter } from './types.js';

export type { ApplyOptions, ChatMessage, ChatTemplate, ContentPart, ImageUrlPart, IncrementalRendering, InputAudioPart, TextPart, TokenCounter, Tokenizer, ToolCall } from './types.js';
export { promptParts, renderedText, wireMessage } from './chat-message.js';
export { countTextYielding, encodeIdsYielding } from './sliced.js';
export { letLoopGo } from '../util/loop-turns.js';
export { PartsText } from './parts-text.js';
export { ApproxTokenizer, DecodingApproxTokenizer, approxTokenizer } from './approx.js';
export { chatmlTemplate } from './chatml.js';
export { toolsPromptText, withToolsTurn } from './tools-prompt.js';
export { audioPartCount, displayText, imagePartCount, messageText } from './content.js';
export { TiktokenTokenizer, TIKTOKEN_ENCODINGS, type TiktokenEncodingName } from './tiktoken.js';
// HfTokenizer (./hf.js) and jinjaChatTemplate (./jinja-template.js) are not re-exported: their libraries
// (@huggingface/tokenizers, @huggingface/jinja) load only when resolve.ts needs them, not at every start (issue 17).
export { hubSettingsFromEnv, downloadTokenizer, findCachedSnapshot, type HubSettings } from './hub.js';
export { resolveTokenCounter, loadTokenizerPath, type TokenizerSpec } from './resolve.js';

/** The fallback when no tokenizer is given or resolves: the approximate tokenizer with ChatML. */
export const defaultTokenCounter: TokenCounter = { tokenizer: approxTokenizer, template: chatmlTemplate };

/** Prompt tokens of a chat request: the template applied to `messages` (and `tools`) with the generation prompt, then encoded. */
export function encodePrompt(counter: TokenCounter, messages: readonly ChatMessage[], tools?: readonly unknown[]): number[] {
  return counter.tokenizer.encode(counter.template.apply(messages, { addGenerationPrompt: true, tools }));
}

/** The number of prompt tokens of a chat request (see encodePrompt). */
export function countPromptTokens(counter: TokenCounter, messages: readonly ChatMessage[], tools?: readonly unknown[]): number {
  return counter.tokenizer.count(counter.template.apply(messages, { addGenerationPrompt: true, tools }));
}
