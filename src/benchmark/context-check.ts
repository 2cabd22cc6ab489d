import type { Conversation } from '../conversation/types.js';
import { messageText, type TokenCounter } from '../tokenizer/index.js';
import { letLoopGo } from '../util/loop-turns.js';

/** The dataset's requests that would pass the server's context: how many, in how many conversations, the largest. */
export interface PastContext {
  requests: number;
  conversations: number;
  /** Tokens the largest one needs (prompt and answer). */
  largest: number;
}

/** Conversations between two lets of the loop: the count is linear in the dataset, and no step holds it long. */
const SLICE = 64;

/**
 * The requests of `conversations` whose prompt and answer would pass `maxModelLen` (issue #34: a Mooncake replay got
 * 13 HTTP 400s the run could have foreseen). A trace turn's need is exact (input_length + output_length); a
 * conversation's is counted from its messages (the recorded answers standing in for the server's, without the chat
 * template's few tokens a message), so about. Only a conversation's first such request counts: its refusal ends it.
 */
export async function requestsPastContext(conversations: readonly Conversation[], counter: TokenCounter, maxModelLen: number, maxTurns?: number): Promise<PastContext> {
  const past: PastContext = { requests: 0, conversations: 0, largest: 0 };
  for (let i = 0; i < conversations.length; i++) {
    if (i % SLICE === SLICE - 1) await letLoopGo();
    const c = conversations[i]!;
    // A conversation of fewer UTF-8 bytes than the limit cannot pass it (a token is at least a byte; 2 a message for
    // the special tokens a tokenizer may add): not tokenized, so the start-up pays for the long conversations only.
    if (c.trace === undefined && conversationBytes(c) + 2 * c.messages.length <= maxModelLen) continue;
    const needs = c.trace !== undefined ? c.trace.turns.map((t) => t.inputLength + t.outputLength) : conversationNeeds(c, counter);
    const steps = maxTurns === undefined ? needs : needs.slice(0, Math.ceil(maxTurns / 2));
    const over = steps.filter((need) => need > maxModelLen);
    if (over.length === 0) continue;
    past.conversations += 1;
    past.requests += c.trace !== undefined ? over.length : 1;
    past.largest = Math.max(past.largest, ...over);
  }
  return past;
}

/** A conversation's text in UTF-8 bytes (its messages and tool calls): a bound on its tokens under any tokenizer. */
function conversationBytes(conversation: Conversation): number {
  let bytes = 0;
  for (const m of conversation.messages) bytes += Buffer.byteLength(messageText(m.content)) + (m.tool_calls === undefined ? 0 : Buffer.byteLength(JSON.stringify(m.tool_calls)));
  return bytes;
}

/** Each step's tokens of a conversation (its history to the step's answer, the answer included), about. */
function conversationNeeds(conversation: Conversation, counter: TokenCounter): number[] {
  const needs: number[] = [];
  let context = 0;
  for (const m of conversation.messages) {
    context += counter.tokenizer.count(messageText(m.content)) + (m.tool_calls === undefined ? 0 : counter.tokenizer.count(JSON.stringify(m.tool_calls)));
    if (m.role === 'assistant') needs.push(context);
  }
  const last = conversation.messages.at(-1);
  if (last !== undefined && last.role !== 'assistant') needs.push(context);
  return needs;
}

/** The warning for `past`, said before the run; undefined when nothing passes. */
export function pastContextWarning(past: PastContext, total: number, maxModelLen: number): string | undefined {
  if (past.requests === 0) return undefined;
  return (
    `${past.conversations} of ${total} conversations reach past the server's max_model_len of ${maxModelLen} tokens ` +
    `(${past.requests} request${past.requests === 1 ? '' : 's'}; the largest needs about ${past.largest}, prompt and answer): ` +
    'the server will refuse each (vLLM answers HTTP 400), and a refusal ends its conversation; --max-turns or a shorter dataset keeps them within it'
  );
}
