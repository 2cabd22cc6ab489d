import { DatasetError, type DatasetLocation } from '../errors/index.js';
import type { ChatMessage } from '../tokenizer/types.js';
import { validateContent } from './content-parts.js';
import type { Conversation, TurnSettings } from './types.js';

const ROLES = new Set(['system', 'user', 'assistant']);

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}` : `a ${typeof value}`;
}

function extensionNumber(value: unknown, key: string, at: DatasetLocation): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new DatasetError(at, `expected "${key}" to be a number >= 0, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Checks one conversation object of the reference format and returns it typed. Throws a DatasetError naming the
 * file, the conversation (index and id), the message and what was expected.
 */
export function validateConversation(value: unknown, at: DatasetLocation): Conversation {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DatasetError(at, `expected a conversation object {"id", "messages"}, got ${describeValue(value)}`);
  }
  const record = value as Record<string, unknown>;
  const id = record.id ?? record.conversation_id;
  if (typeof id !== 'string' && typeof id !== 'number') {
    throw new DatasetError(at, `expected "id" to be a string, got ${id === undefined ? 'nothing' : describeValue(id)}`);
  }
  const where: DatasetLocation = { ...at, conversationId: String(id) };
  const messages = record.messages;
  if (!Array.isArray(messages)) {
    throw new DatasetError(where, `expected "messages" to be an array, got ${messages === undefined ? 'nothing' : describeValue(messages)}`);
  }
  if (messages.length === 0) throw new DatasetError(where, 'expected at least one message, got an empty "messages" list');

  const out: ChatMessage[] = [];
  const turns: TurnSettings[] = [];
  let extensions = false;
  let expected: 'user' | 'assistant' = 'user';
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Record<string, unknown> | null;
    const mAt: DatasetLocation = { ...where, messageIndex: i };
    if (typeof m !== 'object' || m === null || Array.isArray(m)) {
      throw new DatasetError(mAt, `expected a message object {"role", "content"}, got ${describeValue(m)}`);
    }
    const role = m.role;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw new DatasetError(mAt, `expected "role" to be "user", "assistant" or "system", got ${role === undefined ? 'nothing' : describeValue(role)}`);
    }
    const content = validateContent(m.content, mAt);
    if (content === undefined) {
      throw new DatasetError(mAt, `expected "content" to be a string or a list of content parts, got ${m.content === undefined ? 'nothing' : describeValue(m.content)}`);
    }
    if (role === 'system') {
      if (i !== 0) throw new DatasetError(mAt, 'a "system" message is allowed only as the first message');
    } else if (role !== expected) {
      throw new DatasetError(mAt, `expected role "${expected}" (messages alternate user/assistant, starting with user), got "${role}"`);
    } else {
      if (role === 'user') turns.push({});
      const turn = turns[turns.length - 1]!;
      if (role === 'user' && m.think_time_sec !== undefined) {
        turn.thinkTimeSec = extensionNumber(m.think_time_sec, 'think_time_sec', mAt);
        extensions = true;
      }
      if (role === 'assistant' && m.max_tokens !== undefined) {
        turn.maxTokens = extensionNumber(m.max_tokens, 'max_tokens', mAt);
        if (!Number.isInteger(turn.maxTokens) || turn.maxTokens < 1) throw new DatasetError(mAt, `expected "max_tokens" to be a positive integer, got ${turn.maxTokens}`);
        extensions = true;
      }
      expected = expected === 'user' ? 'assistant' : 'user';
    }
    out.push({ role: role as ChatMessage['role'], content });
  }
  if (!out.some((m) => m.role === 'user')) throw new DatasetError(where, 'expected at least one "user" message');
  return extensions ? { id: String(id), messages: out, turns } : { id: String(id), messages: out };
}

/** Throws when two conversations share an id (the engine keys history and records by it). */
export class UniqueIds {
  readonly #seen = new Map<string, number>();

  check(conversation: Conversation, at: DatasetLocation): void {
    const first = this.#seen.get(conversation.id);
    if (first !== undefined) {
      throw new DatasetError({ ...at, conversationId: conversation.id }, `duplicate id: conversation ${first} has the same id`);
    }
    this.#seen.set(conversation.id, at.conversationIndex ?? this.#seen.size);
  }
}
