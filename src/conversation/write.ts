import { createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { once } from 'node:events';
import { ChatloadError } from '../errors/index.js';
import type { Conversation } from './types.js';

/**
 * A conversation in the file format: the reference's `{ id, messages }`, with the per-turn settings written back
 * as message fields (`think_time_sec` on user messages, `max_tokens` on the answer).
 */
export function toFileConversation(conversation: Conversation): { id: string; messages: Record<string, unknown>[] } {
  let userIndex = -1;
  const messages = conversation.messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.role === 'user') {
      userIndex += 1;
      const think = conversation.turns?.[userIndex]?.thinkTimeSec;
      if (think !== undefined) out.think_time_sec = Math.round(think * 1000) / 1000;
    } else if (m.role === 'assistant') {
      const max = conversation.turns?.[userIndex]?.maxTokens;
      if (max !== undefined) out.max_tokens = max;
    }
    return out;
  });
  return { id: conversation.id, messages };
}

/**
 * Writes conversations to `file`: JSONL (one per line) when it ends in `.jsonl`/`.ndjson`, else the reference's
 * JSON list (one conversation per line inside the list, so large files stay diffable and streamable). Written to a
 * temporary file first, then renamed, so a crash never leaves half a dataset.
 */
export async function writeConversations(file: string, conversations: readonly Conversation[]): Promise<void> {
  const jsonl = /\.(jsonl|ndjson)$/i.test(file);
  const temp = `${file}.tmp-${process.pid}`;
  const out = createWriteStream(temp, { encoding: 'utf8' });
  const write = async (text: string): Promise<void> => {
    if (!out.write(text)) await once(out, 'drain');
  };
  try {
    if (!jsonl) await write('[\n');
    for (let i = 0; i < conversations.length; i++) {
      const line = JSON.stringify(toFileConversation(conversations[i]!));
      await write(jsonl ? `${line}\n` : `${line}${i + 1 < conversations.length ? ',' : ''}\n`);
    }
    if (!jsonl) await write(']\n');
    out.end();
    await once(out, 'finish');
    await rename(temp, file);
  } catch (error) {
    out.destroy();
    throw new ChatloadError(`cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
}
