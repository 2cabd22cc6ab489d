import { createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { once } from 'node:events';
import { ChatloadError } from '../errors/index.js';
import { wireMessage } from '../tokenizer/chat-message.js';
import { withForks } from './forks.js';
import type { Conversation } from './types.js';

/**
 * A conversation in the file format: the reference's `{ id, messages }`, with the per-turn settings written back
 * as message fields (`think_time_sec` on user messages, `max_tokens` on the answer).
 */
export function toFileConversation(conversation: Conversation): Record<string, unknown> {
  let step = -1;
  let stepOpen = false;
  const messages = conversation.messages.map((m) => {
    const out = wireMessage(m);
    if (m.role === 'user' || m.role === 'tool') {
      if (!stepOpen) {
        step += 1;
        stepOpen = true;
        const think = conversation.turns?.[step]?.thinkTimeSec;
        if (think !== undefined) out.think_time_sec = Math.round(think * 1000) / 1000;
      }
    } else if (m.role === 'assistant') {
      stepOpen = false;
      const max = conversation.turns?.[step]?.maxTokens;
      if (max !== undefined) out.max_tokens = max;
    }
    return out;
  });
  const file: Record<string, unknown> = { id: conversation.id };
  if (conversation.parent !== undefined) Object.assign(file, { parent: conversation.parent.id, fork_at: conversation.parent.at });
  if (conversation.tools !== undefined) file.tools = conversation.tools;
  file.messages = messages;
  return file;
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
    let first = true;
    // Each session is followed by its sub-agents (and theirs), so a parent comes before its children.
    for (const conversation of withForks(conversations)) {
      const line = JSON.stringify(toFileConversation(conversation));
      await write(jsonl ? `${line}\n` : `${first ? '' : ',\n'}${line}`);
      first = false;
    }
    if (!jsonl && !first) await write('\n');
    if (!jsonl) await write(']\n');
    out.end();
    await once(out, 'finish');
    await rename(temp, file);
  } catch (error) {
    out.destroy();
    throw new ChatloadError(`cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
}
