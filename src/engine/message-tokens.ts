import { renderedText } from '../tokenizer/chat-message.js';
import type { ChatMessage, TokenCounter, Tokenizer } from '../tokenizer/types.js';

/*
 * Local token counts of messages, each counted once and kept (issue #14): a history of hundreds of messages is not
 * re-tokenized on every turn, and a large message is counted in slices with the event loop let go between them, so
 * no count blocks other sessions' timing for more than a couple of milliseconds, even for a 10 MB message.
 */

/** Counts by tokenizer, then by message object (the history keeps the same objects turn after turn). */
const counts = new WeakMap<Tokenizer, WeakMap<ChatMessage, number>>();

/** Characters counted in one slice at first; adapted so a slice takes about SLICE_TARGET_MS. */
const FIRST_SLICE_CHARS = 64 * 1024;
const SLICE_TARGET_MS = 2;
const MAX_SLICE_CHARS = 4 * 1024 * 1024;
/** Texts up to this long are counted in one go (well under a millisecond). */
const SYNC_CHARS = 32 * 1024;

function cacheOf(tokenizer: Tokenizer): WeakMap<ChatMessage, number> {
  let cache = counts.get(tokenizer);
  if (cache === undefined) {
    cache = new WeakMap();
    counts.set(tokenizer, cache);
  }
  return cache;
}

/** The kept count of a message, if it was counted. */
export function keptMessageTokens(tokenizer: Tokenizer, message: ChatMessage): number | undefined {
  return counts.get(tokenizer)?.get(message);
}

/** Keeps `tokens` as the count of `message` (e.g. the server's completion tokens for its own answer). */
export function keepMessageTokens(tokenizer: Tokenizer, message: ChatMessage, tokens: number): void {
  cacheOf(tokenizer).set(message, tokens);
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

/** Where a slice may end at or after `from`: a whitespace character after a non-whitespace one (a piece boundary). */
function cutAt(text: string, from: number): number {
  const limit = Math.min(text.length, from + 4096);
  for (let i = from; i < limit; i++) {
    const c = text.charCodeAt(i);
    if ((c === 32 || c === 10 || c === 9 || c === 13) && !isSpace(text.charCodeAt(i - 1))) return i;
  }
  // No word boundary nearby (e.g. base64): cut anyway, outside a surrogate pair.
  const c = text.charCodeAt(from - 1);
  return c >= 0xd800 && c <= 0xdbff ? from + 1 : from;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

/** setImmediate as a promise: lets timers and sockets run between slices. */
function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The token count of `text`, counted in slices cut before a whitespace run, letting the event loop go between slices.
 * Each slice is sized to take about 2 ms. With the approximate tokenizer (and BPE tokenizers whose pre-tokenizer
 * splits before whitespace, as GPT-2's and tiktoken's do) the sum equals count(text): a piece never spans such a cut.
 * A text with no whitespace for 4,096 characters is cut anyway, which can shift a count by a token per cut.
 */
export async function countTextYielding(tokenizer: Tokenizer, text: string): Promise<number> {
  if (text.length <= SYNC_CHARS) return tokenizer.count(text);
  let total = 0;
  let slice = FIRST_SLICE_CHARS;
  for (let start = 0; start < text.length; ) {
    const end = start + slice >= text.length ? text.length : cutAt(text, start + slice);
    const t0 = performance.now();
    total += tokenizer.count(text.slice(start, end));
    const ms = performance.now() - t0;
    // Aim each slice at SLICE_TARGET_MS, whatever the tokenizer's speed.
    const scaled = ms > 0 ? Math.floor(((end - start) * SLICE_TARGET_MS) / ms) : slice * 2;
    slice = Math.max(4096, Math.min(MAX_SLICE_CHARS, scaled, slice * 4));
    start = end;
    if (start < text.length) await yieldToLoop();
  }
  return total;
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
 * The local prompt count of a request (used only when the server reports no usage). A small prompt is rendered with
 * the chat template and counted exactly; past EXACT_PROMPT_CHARS it is the sum of the messages' kept counts plus the
 * template's tokens per message (measured once), so a long history is never re-tokenized on every turn.
 */
export function localPromptTokens(counter: TokenCounter, messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += m.content.length;
  if (chars <= EXACT_PROMPT_CHARS) return counter.tokenizer.count(counter.template.apply(messages, { addGenerationPrompt: true }));
  const cache = cacheOf(counter.tokenizer);
  const overhead = templateOverhead(counter);
  let total = overhead.generationPrompt;
  for (const m of messages) {
    let n = cache.get(m);
    if (n === undefined) {
      n = counter.tokenizer.count(renderedText(m));
      cache.set(m, n);
    }
    total += n + overhead.perMessage;
  }
  return total;
}
