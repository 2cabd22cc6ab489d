import { readAudioHeader } from '../util/audio-header.js';
import type { ChatMessage, ContentPart } from './types.js';

/**
 * The text of a message's content: the string itself, or its text parts joined (image and audio parts left out).
 * What local token counts and chat templates see: chatload counts no image or audio tokens itself (the server's usage
 * does, docs/METRICS.md).
 */
export function messageText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
}

/** The number of image parts in a message's content (0 for a string). */
export function imagePartCount(content: ChatMessage['content']): number {
  if (typeof content === 'string') return 0;
  let images = 0;
  for (const part of content) if (part.type === 'image_url') images++;
  return images;
}

/** The number of audio parts in a message's content (0 for a string). */
export function audioPartCount(content: ChatMessage['content']): number {
  if (typeof content === 'string') return 0;
  let audio = 0;
  for (const part of content) if (part.type === 'input_audio') audio++;
  return audio;
}

/** A short stand-in for a media part in terminal output, never its bytes: `[image]`, `[audio wav 2.5 s]`. */
function placeholder(part: ContentPart): string {
  if (part.type === 'image_url') return '[image]';
  if (part.type !== 'input_audio') return '';
  const { data, format } = part.input_audio;
  const header = readAudioHeader(data, format);
  return typeof header === 'string' ? `[audio ${format}]` : `[audio ${format} ${header.seconds.toFixed(1)} s]`;
}

/**
 * A message's content as terminal output shows it (--print-content): its text, each image or audio part a short
 * placeholder where it stands, so no base64 reaches the terminal.
 */
export function displayText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) text += part.type === 'text' ? part.text : placeholder(part);
  return text;
}
