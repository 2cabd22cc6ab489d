import { createHash } from 'node:crypto';
import { encodeIdsYielding, PartsText, promptParts, type ChatMessage, type TokenCounter } from '../tokenizer/index.js';
import type { SimMessage } from './request-parse.js';

/*
 * Prompt token ids of chat messages whose content may hold images. An image stands for `tokensPerImage` tokens, as a
 * vision model's image placeholder tokens do (vLLM expands one `<image>` into the patch count). Their ids come from a
 * hash of the image's URL: the same image gives the same ids, so a prefix cache reuses it across turns, and a
 * different one breaks the prefix there (vLLM's prefix cache hashes the image content into its blocks the same way).
 */

/** Ids of image tokens start here: above every real vocabulary, so they never equal a text token's id. */
const IMAGE_ID_BASE = 0x40000000;
/** Marks an image's place in the rendered template: private-use characters no text or template contains. */
const MARK_OPEN = '\u{F0000}';
const MARK_CLOSE = '\u{F0001}';
const MARK = /\u{F0000}(\d+)\u{F0001}/gu;

/** The ids one image stands for: `count` ids from a hash of its URL (a data URL: its bytes). */
export function imageTokenIds(url: string, count: number): number[] {
  const digest = createHash('sha256').update(url).digest();
  const seed = digest.readUInt32LE(0) & 0x0fffffff;
  const ids = new Array<number>(count);
  for (let i = 0; i < count; i++) ids[i] = IMAGE_ID_BASE + ((seed + i * 7919) & 0x0fffffff);
  return ids;
}

/** True when some message has an image part. */
function hasImages(messages: readonly SimMessage[]): boolean {
  return messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url'));
}

/**
 * The messages with each image as a marker in its text (tool calls kept), and the images' URLs in marker order. With
 * `keepTextParts` (no images, a template that renders a message's text parts as their concatenation) a content of
 * text parts is kept as it is: joined, a large content received in pieces (request-parse.ts) would be copied into one
 * string in one piece when first read.
 */
function flatten(messages: readonly SimMessage[], keepTextParts = false): { flat: ChatMessage[]; images: string[] } {
  const images: string[] = [];
  const flat: ChatMessage[] = messages.map((m) => {
    let text: ChatMessage['content'] = '';
    if (typeof m.content === 'string') text = m.content;
    else if (keepTextParts) text = m.content.map((part) => ({ type: 'text', text: part.type === 'text' ? part.text : '' }));
    else {
      for (const part of m.content) {
        if (part.type === 'text') text += part.text;
        else text += `${MARK_OPEN}${images.push(part.url) - 1}${MARK_CLOSE}`;
      }
    }
    return m.tool_calls === undefined ? { role: m.role, content: text } : { role: m.role, content: text, tool_calls: m.tool_calls };
  });
  return { flat, images };
}

/**
 * The prompt ids of `messages`: the chat template applied (with the generation prompt) and encoded, each image's
 * `tokensPerImage` ids where it stands. Text parts of a message are joined with no separator, as vLLM's chat
 * template rendering of string content sees them; `tools`, the request's tool definitions, are rendered into it
 * (tokenizer/tools-prompt.ts). The template may throw (a ConfigError), as encodePrompt does.
 */
export function encodeSimMessages(counter: TokenCounter, messages: readonly SimMessage[], tokensPerImage: number, tools?: readonly unknown[]): number[] {
  const { flat, images } = flatten(messages);
  const rendered = counter.template.apply(flat, { addGenerationPrompt: true, tools });
  if (!hasImages(messages)) return counter.tokenizer.encode(rendered);
  return withImages(counter, rendered, images, tokensPerImage);
}

/**
 * encodeSimMessages, a text-only prompt encoded in slices that let the event loop go: a 3 MB prompt held every
 * other stream for seconds (issue #14). A message-by-message template's rendering is read as its parts, never
 * concatenated (flattening a 3 MB rendering took ~2 ms in one piece; tokenizer/parts-text.ts). Prompts with images
 * are encoded at once, between their images.
 */
export async function encodeSimMessagesYielding(counter: TokenCounter, messages: readonly SimMessage[], tokensPerImage: number, tools?: readonly unknown[]): Promise<ArrayLike<number>> {
  const incremental = counter.template.incremental;
  if (!hasImages(messages) && incremental !== undefined) {
    const { flat } = flatten(messages, true);
    return encodeIdsYielding(counter.tokenizer, new PartsText(promptParts(incremental, flat, tools, true)));
  }
  const { flat, images } = flatten(messages);
  const rendered = counter.template.apply(flat, { addGenerationPrompt: true, tools });
  if (!hasImages(messages)) return encodeIdsYielding(counter.tokenizer, rendered);
  return withImages(counter, rendered, images, tokensPerImage);
}

function withImages(counter: TokenCounter, rendered: string, images: readonly string[], tokensPerImage: number): number[] {
  const ids: number[] = [];
  let last = 0;
  for (const match of rendered.matchAll(MARK)) {
    for (const id of counter.tokenizer.encode(rendered.slice(last, match.index))) ids.push(id);
    for (const id of imageTokenIds(images[Number(match[1])]!, tokensPerImage)) ids.push(id);
    last = match.index + match[0].length;
  }
  for (const id of counter.tokenizer.encode(rendered.slice(last))) ids.push(id);
  return ids;
}
