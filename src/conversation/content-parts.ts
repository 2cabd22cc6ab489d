import { DatasetError, type DatasetLocation } from '../errors/index.js';
import type { ContentPart } from '../tokenizer/types.js';

/*
 * Content as an array of parts (OpenAI's `content: [{type, ...}]`). Text parts are counted locally; image parts are
 * passed through to the server as they are and count 0 local tokens (the server's usage says what they cost).
 * Each part type has its own small checker so another part type is one more function.
 */

/** Checks one `{type: "text", text}` part. */
function textPart(part: Record<string, unknown>, at: DatasetLocation, index: number): ContentPart {
  if (typeof part.text !== 'string') throw new DatasetError(at, `expected "content[${index}].text" to be a string`);
  return { type: 'text', text: part.text };
}

/** Checks one `{type: "image_url", image_url: {url}}` part: passed through, 0 local tokens. */
function imageUrlPart(part: Record<string, unknown>, at: DatasetLocation, index: number): ContentPart {
  const image = part.image_url as Record<string, unknown> | null | undefined;
  if (typeof image !== 'object' || image === null || typeof image.url !== 'string') {
    throw new DatasetError(at, `expected "content[${index}].image_url" to be an object {"url": string}`);
  }
  return typeof image.detail === 'string' ? { type: 'image_url', image_url: { url: image.url, detail: image.detail } } : { type: 'image_url', image_url: { url: image.url } };
}

const PART_CHECKERS: Readonly<Record<string, (part: Record<string, unknown>, at: DatasetLocation, index: number) => ContentPart>> = {
  text: textPart,
  image_url: imageUrlPart,
};

/** Checks a content array; throws a DatasetError naming the bad part (`content[2].text`). */
export function validateContentParts(value: readonly unknown[], at: DatasetLocation): ContentPart[] {
  return value.map((raw, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new DatasetError(at, `expected "content[${index}]" to be a part object {"type", ...}`);
    const part = raw as Record<string, unknown>;
    const check = typeof part.type === 'string' ? PART_CHECKERS[part.type] : undefined;
    if (check === undefined) {
      throw new DatasetError(at, `expected "content[${index}].type" to be ${Object.keys(PART_CHECKERS).map((t) => `"${t}"`).join(' or ')}, got ${JSON.stringify(part.type) ?? 'nothing'}`);
    }
    return check(part, at, index);
  });
}
