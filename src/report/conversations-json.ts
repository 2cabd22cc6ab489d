import type { Conversation } from '../conversation/types.js';
import { writeJsonAtomic } from '../store/atomic-write.js';

/** -o/--output-file: the finished conversations with the answers that were used, in the reference's format (a JSON list of {id, messages}). */
export function writeConversationsJson(path: string, conversations: readonly Conversation[]): void {
  writeJsonAtomic(
    path,
    conversations.map((c) => ({ id: c.id, messages: c.messages })),
  );
}
