import { readFileSync, statSync } from 'node:fs';
import { extname, isAbsolute, join } from 'node:path';
import { DatasetError } from '../errors/index.js';
import type { ChatMessage, ContentPart } from '../tokenizer/types.js';
import { imageUrlProblem } from './content-parts.js';
import { formatCount, SIZE_BOUNDS } from './size-bounds.js';

/*
 * LLaVA-style ShareGPT items (LLaVA-Instruct, ShareGPT4V): `"image": "000000033471.jpg"` (or a list) beside
 * `conversations`, and `<image>` in the human message where the image goes. The file is read from the image folder
 * and becomes a data URL image part there: the dataset then carries its images and replays anywhere.
 */

/** The `<image>` placeholder LLaVA puts in the human message, with the newline that usually follows it. */
const IMAGE_TOKEN = /<image>\n?/g;

const MEDIA_TYPES: Readonly<Record<string, string>> = { '.png': 'png', '.jpg': 'jpeg', '.jpeg': 'jpeg', '.gif': 'gif', '.webp': 'webp' };

/** The image file names of a ShareGPT item's `image` field (a string or a list of strings); [] when absent. */
export function itemImages(item: { image?: unknown; images?: unknown }): string[] | 'bad' {
  const value = item.image ?? item.images;
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  return 'bad';
}

/**
 * Reads an image file as a data URL. A missing file, an unknown extension or a file over the image bound is a
 * DatasetError naming the item and the file (never its bytes).
 */
export function imageDataUrl(name: string, imageDir: string, itemId: string, source: string): string {
  const path = isAbsolute(name) ? name : join(imageDir, name);
  const where = { file: source, conversationId: itemId };
  const media = MEDIA_TYPES[extname(name).toLowerCase()];
  if (media === undefined) throw new DatasetError(where, `ShareGPT item ${JSON.stringify(itemId)}: image ${JSON.stringify(name)} is not a .png, .jpg, .gif or .webp file`);
  let bytes: number;
  try {
    bytes = statSync(path).size;
  } catch {
    throw new DatasetError(where, `ShareGPT item ${JSON.stringify(itemId)}: image file ${path} not found (give the image folder with --image-dir)`);
  }
  // Checked before reading: base64 takes 4 characters per 3 bytes.
  const chars = Math.ceil(bytes / 3) * 4 + 30;
  if (chars > SIZE_BOUNDS.imageUrlChars) throw new DatasetError(where, `ShareGPT item ${JSON.stringify(itemId)}: image ${path} (${formatCount(bytes)} bytes) is over the bound of ${formatCount(SIZE_BOUNDS.imageUrlChars)} data URL characters`);
  const url = `data:image/${media};base64,${readFileSync(path).toString('base64')}`;
  const problem = imageUrlProblem(url);
  if (problem !== undefined) throw new DatasetError(where, `ShareGPT item ${JSON.stringify(itemId)}: image ${path}: ${problem}`);
  return url;
}

/**
 * Puts `urls` into the messages as image parts: each `<image>` placeholder of the user messages, in order, becomes
 * the next image; images left over (no placeholder) open the first user message, where LLaVA puts them. A message
 * with images becomes a part list; the others stay strings.
 */
export function placeImages(messages: ChatMessage[], urls: readonly string[]): void {
  let next = 0;
  const image = (): ContentPart => ({ type: 'image_url', image_url: { url: urls[next++]! } });
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content !== 'string' || !message.content.includes('<image>')) continue;
    const parts: ContentPart[] = [];
    const pieces = message.content.split(IMAGE_TOKEN);
    pieces.forEach((text, i) => {
      if (text.length > 0) parts.push({ type: 'text', text });
      if (i < pieces.length - 1 && next < urls.length) parts.push(image());
    });
    message.content = parts;
  }
  if (next >= urls.length) return;
  const first = messages.find((m) => m.role === 'user');
  if (first === undefined) return;
  const leading: ContentPart[] = [];
  while (next < urls.length) leading.push(image());
  first.content = [...leading, ...(typeof first.content === 'string' ? [{ type: 'text' as const, text: first.content }] : first.content)];
}
