import { renderedText } from '../tokenizer/chat-message.js';
import { messageText } from '../tokenizer/content.js';
import { countTextYielding } from '../tokenizer/sliced.js';
import { withToolsTurn } from '../tokenizer/tools-prompt.js';
import type { ChatMessage, TokenCounter, Tokenizer } from '../tokenizer/types.js';

/*
 * Local token counts of messages, each counted once and kept (issue #14): a history of hundreds of messages is not
 * re-tokenized on every turn, and a large message is counted in slices with the event loop let go between them
 * (tokenizer/sliced.ts), so no count blocks other sessions' timing for more than a couple of milliseconds.
 */

/** Counts by tokenizer, then by message object (the history keeps the same objects turn after turn). */
const counts = new WeakMap<Tokenizer, WeakMap<ChatMessage, number>>();

function cacheOf(tokenizer: Tokenizer): WeakMap<ChatMessage, number> {
  let cache = counts.get(tokenizer);
  if (cache === undefined) {
    cache = new WeakMap();
    counts.set(tokenizer, cache);
  }
  return cache;
}

/** A message's local token count (its text and tool calls), counted once (in slices when large) and kept. */
export async function messageTokens(tokenizer: Tokenizer, message: ChatMessage): Promise<number> {
  const cache = cacheOf(tokenizer);
  const kept = cache.get(message);
  if (kept !== undefined) return kept;
  const n = await countTextYielding(tokenizer, renderedText(message));
  cache.set(message, n);
  return n;
}

/** Characters of prompt up to which a local prompt count renders the chat template over the whole prompt (exact). */
const EXACT_PROMPT_CHARS = 256 * 1024;

/** Template tokens around one message (e.g. ChatML's `<|im_start|>user\n` ... `<|im_end|>\n`), measured once per template. */
const overheads = new WeakMap<object, { perMessage: number; generationPrompt: number }>();

function templateOverhead(counter: TokenCounter): { perMessage: number; generationPrompt: number } {
  let o = overheads.get(counter.template);
  if (o === undefined) {
    const one: ChatMessage[] = [{ role: 'user', content: 'x' }];
    const bare = counter.tokenizer.count(counter.template.apply(one, { addGenerationPrompt: false }));
    const withPrompt = counter.tokenizer.count(counter.template.apply(one, { addGenerationPrompt: true }));
    o = { perMessage: Math.max(0, bare - counter.tokenizer.count('x')), generationPrompt: Math.max(0, withPrompt - bare) };
    overheads.set(counter.template, o);
  }
  return o;
}

/**
 * The local prompt count of a request (used only when the server reports no usage), its tool definitions included
 * (tokenizer/tools-prompt.ts). A small prompt is rendered with the chat template and counted exactly; past
 * EXACT_PROMPT_CHARS it is the sum of the messages' kept counts (the tools' turn among them) plus the template's tokens
 * per message (measured once), so a long history is never re-tokenized on every turn.
 */
export function localPromptTokens(counter: TokenCounter, messages: readonly ChatMessage[], tools?: readonly unknown[]): number {
  const all = withToolsTurn(messages, tools);
  let chars = 0;
  for (const m of all) chars += typeof m.content === 'string' ? m.content.length : messageText(m.content).length;
  if (chars <= EXACT_PROMPT_CHARS) return counter.tokenizer.count(counter.template.apply(messages, { addGenerationPrompt: true, tools }));
  const cache = cacheOf(counter.tokenizer);
  const overhead = templateOverhead(counter);
  let total = overhead.generationPrompt;
  for (const m of all) {
    let n = cache.get(m);
    if (n === undefined) {
      n = counter.tokenizer.count(renderedText(m));
      cache.set(m, n);
    }
    total += n + overhead.perMessage;
  }
  return total;
}
