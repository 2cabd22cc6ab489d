import { DatasetError, type DatasetLocation } from '../errors/index.js';
import type { ChatMessage, ContentPart, InputAudioPart } from '../tokenizer/types.js';
import { readAudioHeader } from '../util/audio-header.js';
import { formatCount, SIZE_BOUNDS } from './size-bounds.js';

/*
 * Message content as a list of parts (OpenAI's chat format): `{"type":"text","text"}`,
 * `{"type":"image_url","image_url":{"url"}}` and `{"type":"input_audio","input_audio":{"data","format"}}`. Images
 * and audio pass through to the server as they are; local token counts see only the text (tokenizer/content.ts).
 * Checked cheaply: the shape, an image's data URL header and length; an audio part's format, length, base64
 * alphabet and its file header (a few bytes decoded, util/audio-header.ts). No message ever quotes the bytes.
 */

/** Media types a data URL image may have: those OpenAI's and vLLM's image inputs take. */
const IMAGE_DATA_URL = /^data:image\/(png|jpeg|jpg|gif|webp);base64,/;

/**
 * Why `url` is not an image URL chatload sends, or undefined when it is one: a base64 data URL of a PNG, JPEG, GIF or
 * WebP image of at most `maxChars` characters, or an http(s) URL (the server fetches it). Never quotes the data.
 */
export function imageUrlProblem(url: unknown, maxChars: number = SIZE_BOUNDS.imageUrlChars): string | undefined {
  if (typeof url !== 'string' || url.length === 0) return 'expected "image_url.url" to be a data URL or an http(s) URL';
  if (url.startsWith('http://') || url.startsWith('https://')) return url.length > 8192 ? 'an http(s) image URL over 8,192 characters' : undefined;
  if (!url.startsWith('data:')) return `expected "image_url.url" to be a data URL (data:image/png;base64,…) or an http(s) URL, got one starting ${JSON.stringify(url.slice(0, 12))}`;
  const header = IMAGE_DATA_URL.exec(url.slice(0, 40));
  if (header === null) return `expected a base64 image data URL (data:image/png|jpeg|gif|webp;base64,…), got one starting ${JSON.stringify(url.slice(0, Math.max(5, url.indexOf(',') + 1)).slice(0, 40))}`;
  if (url.length > maxChars) return `an image data URL of ${formatCount(url.length)} characters, over the bound of ${formatCount(maxChars)}`;
  if (url.length === header[0].length) return 'an image data URL with no data';
  return undefined;
}

/** Base64's alphabet; `=` only as the padding at the end. */
const NOT_BASE64 = /[^A-Za-z0-9+/]/;

/**
 * Why `value` is not the `input_audio` object of an audio part chatload sends, or undefined when it is one: base64
 * `data` (no `data:` prefix, as OpenAI's chat API takes it) of at most `maxChars` characters, whose header is a WAV's
 * or an MP3's as `format` ("wav" or "mp3") says. Never quotes the data.
 */
export function audioPartProblem(value: unknown, maxChars: number = SIZE_BOUNDS.audioDataChars): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'expected "input_audio" to be an object {"data", "format"}';
  const { data, format } = value as { data?: unknown; format?: unknown };
  if (format !== 'wav' && format !== 'mp3') return `expected "input_audio.format" to be "wav" or "mp3", got ${typeof format === 'string' ? JSON.stringify(format.slice(0, 20)) : String(format ?? 'nothing')}`;
  if (typeof data !== 'string' || data.length === 0) return 'expected "input_audio.data" to be the base64 audio file';
  if (data.length > maxChars) return `an audio part of ${formatCount(data.length)} base64 characters, over the bound of ${formatCount(maxChars)}`;
  if (data.startsWith('data:')) return 'expected "input_audio.data" to be bare base64, not a data URL (OpenAI\'s input_audio takes no "data:" prefix)';
  const body = data.endsWith('==') ? data.slice(0, -2) : data.endsWith('=') ? data.slice(0, -1) : data;
  const bad = NOT_BASE64.exec(body);
  if (bad !== null) return `expected "input_audio.data" to be base64, found a character that is not base64 at offset ${formatCount(bad.index)}`;
  if (data.length % 4 !== 0) return `expected "input_audio.data" to be base64, got ${formatCount(data.length)} characters (not a multiple of 4)`;
  const header = readAudioHeader(data, format);
  if (typeof header === 'string') return `"input_audio.data" (format "${format}") is ${header}`;
  return undefined;
}

/** One content part, checked and copied with only the fields chatload sends. Throws a DatasetError naming the part. */
export function validateContentPart(value: unknown, index: number, at: DatasetLocation): ContentPart {
  const where = `content[${index}]`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DatasetError(at, `${where}: expected a content part {"type", ...}`);
  const part = value as { type?: unknown; text?: unknown; image_url?: unknown; input_audio?: unknown };
  if (part.type === 'text') {
    if (typeof part.text !== 'string') throw new DatasetError(at, `${where}: expected "text" to be a string`);
    return { type: 'text', text: part.text };
  }
  if (part.type === 'image_url') {
    const image = part.image_url;
    // OpenAI's form is {"url": …}; a bare string is accepted as the URL, as vLLM does.
    const url = typeof image === 'string' ? image : (image as { url?: unknown } | null)?.url;
    const problem = imageUrlProblem(url);
    if (problem !== undefined) throw new DatasetError(at, `${where}: ${problem}`);
    const detail = (image as { detail?: unknown } | null)?.detail;
    return { type: 'image_url', image_url: typeof detail === 'string' ? { url: url as string, detail } : { url: url as string } };
  }
  if (part.type === 'input_audio') {
    const problem = audioPartProblem(part.input_audio);
    if (problem !== undefined) throw new DatasetError(at, `${where}: ${problem}`);
    const { data, format } = part.input_audio as InputAudioPart['input_audio'];
    return { type: 'input_audio', input_audio: { data, format } };
  }
  throw new DatasetError(at, `${where}: expected "type" to be "text", "image_url" or "input_audio", got ${JSON.stringify(part.type ?? null)}`);
}

/** A message's content: a string, or a non-empty list of text, image and audio parts. Undefined when it is neither. */
export function validateContent(value: unknown, at: DatasetLocation): ChatMessage['content'] | undefined {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.map((part, i) => validateContentPart(part, i, at));
}
