import type { ChatMessage } from './types.js';

/**
 * The text of a message's content: the string itself, or its text parts joined (image parts left out). What local
 * token counts and chat templates see: chatload counts no image tokens itself (the server's usage does, docs/METRICS.md).
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
