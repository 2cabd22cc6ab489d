import type { ChatMessage } from '../tokenizer/types.js';

/**
 * One conversation as the reference tool's files hold it: an id and its messages. An optional leading `system`
 * message is sent with every turn; after it, messages alternate user/assistant starting with user. The assistant
 * messages are recorded answers: they set each turn's `max_tokens`, and by default the server's real answer
 * replaces them in the history.
 */
export interface Conversation {
  id: string;
  messages: ChatMessage[];
}

/** Counts of a dataset, for reports. */
export interface DatasetInfo {
  /** The file it came from, or `built-in demo`. */
  source: string;
  conversations: number;
  userTurns: number;
  messages: number;
}
