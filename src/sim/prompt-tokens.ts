import { createHash } from 'node:crypto';
import { encodeIdsYielding, PartsText, promptParts, type ChatMessage, type TokenCounter } from '../tokenizer/index.js';
import type { SimContentPart, SimMessage } from './request-parse.js';

/*
 * Prompt token ids of chat messages whose content may hold images and audio. An image stands for `tokensPerImage`
 * tokens, as a vision model's image placeholder tokens do (vLLM expands one `<image>` into the patch count); an audio
 * part for its duration times `tokensPerAudioSecond` (rounded up), as an audio encoder's frames do (Qwen2-Audio: one
 * token per 40 ms). Their ids come from a hash of the media's data: the same image or audio gives the same ids, so a
 * prefix cache reuses it across turns, and a different one breaks the prefix there (vLLM's prefix cache hashes the
 * media content into its blocks the same way).
 */

/** Prompt tokens each kind of media stands for (the simulator's `tokens_per_image` and `tokens_per_audio_second`). */
export interface MediaTokens {
  tokensPerImage: number;
  tokensPerAudioSecond: number;
}

/** Ids of media tokens start here: above every real vocabulary, so they never equal a text token's id. */
const MEDIA_ID_BASE = 0x40000000;
/** Marks a media part's place in the rendered template: private-use characters no text or template contains. */
const MARK_OPEN = '\u{F0000}';
const MARK_CLOSE = '\u{F0001}';
const MARK = /\u{F0000}(\d+)\u{F0001}/gu;

/** The ids one media part stands for: `count` ids from a hash of `key` (an image's URL, a data URL's bytes; an audio part's format and data). */
export function mediaTokenIds(key: string, count: number): number[] {
  const digest = createHash('sha256').update(key).digest();
  const seed = digest.readUInt32LE(0) & 0x0fffffff;
  const ids = new Array<number>(count);
  for (let i = 0; i < count; i++) ids[i] = MEDIA_ID_BASE + ((seed + i * 7919) & 0x0fffffff);
  return ids;
}

/** Tokens `seconds` of audio stand for at `perSecond` (rounded up: a part of an encoder frame is a frame). */
export function audioTokenCount(seconds: number, perSecond: number): number {
  return Math.ceil(seconds * perSecond - 1e-9);
}

/** A media part's ids. */
function partIds(part: Exclude<SimContentPart, { type: 'text' }>, media: MediaTokens): number[] {
  if (part.type === 'image_url') return mediaTokenIds(part.url, media.tokensPerImage);
  return mediaTokenIds(`audio/${part.format};${part.data}`, audioTokenCount(part.seconds, media.tokensPerAudioSecond));
}

/** True when some message has an image or audio part. */
function hasMedia(messages: readonly SimMessage[]): boolean {
  return messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type !== 'text'));
}

/**
 * The messages with each image or audio part as a marker in its text (tool calls kept), and the parts in marker
 * order. With `keepTextParts` (no media, a template that renders a message's text parts as their concatenation) a content of
 * text parts is kept as it is: joined, a large content received in pieces (request-parse.ts) would be copied into one
 * string in one piece when first read.
 */
function flatten(messages: readonly SimMessage[], keepTextParts = false): { flat: ChatMessage[]; media: Exclude<SimContentPart, { type: 'text' }>[] } {
  const media: Exclude<SimContentPart, { type: 'text' }>[] = [];
  const flat: ChatMessage[] = messages.map((m) => {
    let text: ChatMessage['content'] = '';
    if (typeof m.content === 'string') text = m.content;
    else if (keepTextParts) text = m.content.map((part) => ({ type: 'text', text: part.type === 'text' ? part.text : '' }));
    else {
      for (const part of m.content) {
        if (part.type === 'text') text += part.text;
        else text += `${MARK_OPEN}${media.push(part) - 1}${MARK_CLOSE}`;
      }
    }
    return m.tool_calls === undefined ? { role: m.role, content: text } : { role: m.role, content: text, tool_calls: m.tool_calls };
  });
  return { flat, media };
}

/**
 * The prompt ids of `messages`: the chat template applied (with the generation prompt) and encoded, each image's
 * and audio part's ids (MediaTokens) where it stands. Text parts of a message are joined with no separator, as vLLM's chat
 * template rendering of string content sees them; `tools`, the request's tool definitions, are rendered into it
 * (tokenizer/tools-prompt.ts). The template may throw (a ConfigError), as encodePrompt does.
 */
export function encodeSimMessages(counter: TokenCounter, messages: readonly SimMessage[], media: MediaTokens, tools?: readonly unknown[]): number[] {
  const { flat, media: parts } = flatten(messages);
  const rendered = counter.template.apply(flat, { addGenerationPrompt: true, tools });
  if (!hasMedia(messages)) return counter.tokenizer.encode(rendered);
  return withMedia(counter, rendered, parts, media);
}

/**
 * encodeSimMessages, a text-only prompt encoded in slices that let the event loop go: a 3 MB prompt held every
 * other stream for seconds (issue #14). A message-by-message template's rendering is read as its parts, never
 * concatenated (flattening a 3 MB rendering took ~2 ms in one piece; tokenizer/parts-text.ts). Prompts with images
 * or audio are encoded at once, between their media parts.
 */
export async function encodeSimMessagesYielding(counter: TokenCounter, messages: readonly SimMessage[], media: MediaTokens, tools?: readonly unknown[]): Promise<ArrayLike<number>> {
  const incremental = counter.template.incremental;
  if (!hasMedia(messages) && incremental !== undefined) {
    const { flat } = flatten(messages, true);
    return encodeIdsYielding(counter.tokenizer, new PartsText(promptParts(incremental, flat, tools, true)));
  }
  const { flat, media: parts } = flatten(messages);
  const rendered = counter.template.apply(flat, { addGenerationPrompt: true, tools });
  if (!hasMedia(messages)) return encodeIdsYielding(counter.tokenizer, rendered);
  return withMedia(counter, rendered, parts, media);
}

function withMedia(counter: TokenCounter, rendered: string, parts: readonly Exclude<SimContentPart, { type: 'text' }>[], media: MediaTokens): number[] {
  const ids: number[] = [];
  let last = 0;
  for (const match of rendered.matchAll(MARK)) {
    for (const id of counter.tokenizer.encode(rendered.slice(last, match.index))) ids.push(id);
    for (const id of partIds(parts[Number(match[1])]!, media)) ids.push(id);
    last = match.index + match[0].length;
  }
  for (const id of counter.tokenizer.encode(rendered.slice(last))) ids.push(id);
  return ids;
}
