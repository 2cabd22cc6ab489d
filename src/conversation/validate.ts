import { DatasetError, type DatasetLocation } from '../errors/index.js';
import type { ChatMessage, ToolCall } from '../tokenizer/types.js';
import { MAX_WAIT_SEC } from './size-bounds.js';
import { shownValue } from '../errors/shown-value.js';
import { validateContent } from './content-parts.js';
import { validateToolCalls, validateTools } from './tool-calls.js';
import type { Conversation, ForkPoint, TurnSettings } from './types.js';

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);


function extensionNumber(value: unknown, key: string, at: DatasetLocation): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new DatasetError(at, `expected "${key}" to be a number >= 0, got ${shownValue(value)}`);
  }
  return value;
}

/** The message's content: a string, a non-empty list of parts, or '' for an assistant with tool calls and null/absent content. */
function content(m: Record<string, unknown>, role: string, hasToolCalls: boolean, at: DatasetLocation): ChatMessage['content'] {
  const value = m.content;
  if ((value === null || value === undefined) && role === 'assistant' && hasToolCalls) return '';
  const checked = validateContent(value, at);
  if (checked !== undefined) return checked;
  const allowed = role === 'assistant' ? 'a string, a list of content parts, or null with "tool_calls"' : 'a string or a list of content parts';
  throw new DatasetError(at, `expected "content" to be ${allowed}, got ${shownValue(value)}`);
}

/** The fork point of a sub-agent (`parent`, `fork_at`), checked against its parent later, when the dataset is complete. */
function forkPoint(record: Record<string, unknown>, at: DatasetLocation): ForkPoint | undefined {
  if (record.parent === undefined && record.fork_at === undefined) return undefined;
  if (typeof record.parent !== 'string' && typeof record.parent !== 'number') throw new DatasetError(at, `expected "parent" to be the id of the session it forks from, got ${shownValue(record.parent)}`);
  const forkAt = record.fork_at;
  if (typeof forkAt !== 'number' || !Number.isInteger(forkAt) || forkAt < 1) throw new DatasetError(at, `expected "fork_at" to be a message index >= 1, got ${shownValue(forkAt)}`);
  return { id: String(record.parent), at: forkAt };
}

/**
 * What may come next. Messages run in steps: one request's input (a user message, or the tool results that answer the
 * previous assistant's calls, optionally followed by a user message), then the assistant's answer.
 */
type Expect = 'user' | 'assistant' | 'tool' | 'after-tool';

function expectedRoles(expect: Expect): string {
  if (expect === 'user') return 'role "user" (messages alternate user/assistant, starting with user)';
  if (expect === 'assistant') return 'role "assistant" (messages alternate user/assistant, starting with user)';
  if (expect === 'tool') return 'role "tool" (an assistant message with "tool_calls" is followed by one "tool" message per call)';
  return 'role "tool", "assistant" or "user" after a tool result';
}

/**
 * Checks one conversation object of the reference format and returns it typed. Throws a DatasetError naming the
 * file, the conversation (index and id), the message and what was expected. Beyond the reference: `tools`, assistant
 * `tool_calls` (content null), `tool` messages with `tool_call_id`, content as an array of parts, and a sub-agent's
 * `parent` and `fork_at`.
 */
export function validateConversation(value: unknown, at: DatasetLocation): Conversation {
  const { record, id, where, messages } = conversationObject(value, at);
  const tools = record.tools === undefined ? undefined : validateTools(record.tools, where);
  const parent = forkPoint(record, where);

  const out: ChatMessage[] = [];
  const order = new MessageOrder();
  for (let i = 0; i < messages.length; i++) {
    const mAt: DatasetLocation = { ...where, messageIndex: i };
    const { m, role, message, toolCalls } = messageObject(messages[i], mAt);
    if (role === 'system') {
      if (i !== 0) throw new DatasetError(mAt, 'a "system" message is allowed only as the first message');
      out.push(message);
      continue;
    }
    order.add(m, role, message, toolCalls, mAt);
    out.push(message);
  }
  if (!out.some((m) => m.role === 'user')) throw new DatasetError(where, 'expected at least one "user" message');
  const conversation: Conversation = { id: String(id), messages: out };
  if (order.extensions) conversation.turns = order.turns;
  if (tools !== undefined) conversation.tools = tools;
  if (parent !== undefined) {
    if (out[0]?.role === 'system') throw new DatasetError({ ...where, messageIndex: 0 }, 'a sub-agent (with "parent") starts with a "user" message: the system message is its parent\'s');
    conversation.parent = parent;
  }
  return conversation;
}

/** Checks the conversation's own fields (an object with an `id` and a non-empty `messages` array) and names where it is. */
function conversationObject(value: unknown, at: DatasetLocation): { record: Record<string, unknown>; id: string | number; where: DatasetLocation; messages: unknown[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DatasetError(at, `expected a conversation object {"id", "messages"}, got ${shownValue(value)}`);
  }
  const record = value as Record<string, unknown>;
  const id = record.id ?? record.conversation_id;
  if (typeof id !== 'string' && typeof id !== 'number') {
    throw new DatasetError(at, `expected "id" to be a string, got ${shownValue(id)}`);
  }
  const where: DatasetLocation = { ...at, conversationId: String(id) };
  const messages = record.messages;
  if (!Array.isArray(messages)) {
    throw new DatasetError(where, `expected "messages" to be an array, got ${shownValue(messages)}`);
  }
  if (messages.length === 0) throw new DatasetError(where, 'expected at least one message, got an empty "messages" list');
  return { record, id, where, messages };
}

/** Checks one message on its own (an object with a known role, its content and an assistant's tool calls) and types it. */
function messageObject(value: unknown, at: DatasetLocation): { m: Record<string, unknown>; role: string; message: ChatMessage; toolCalls: ToolCall[] | undefined } {
  const m = value as Record<string, unknown> | null;
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    throw new DatasetError(at, `expected a message object {"role", "content"}, got ${shownValue(m)}`);
  }
  const role = m.role;
  if (typeof role !== 'string' || !ROLES.has(role)) {
    throw new DatasetError(at, `expected "role" to be "user", "assistant", "system" or "tool", got ${role === undefined ? 'nothing' : shownValue(role)}`);
  }
  const toolCalls: ToolCall[] | undefined = role === 'assistant' && m.tool_calls !== undefined && m.tool_calls !== null ? validateToolCalls(m.tool_calls, at) : undefined;
  const message: ChatMessage = { role: role as ChatMessage['role'], content: content(m, role, toolCalls !== undefined, at) };
  if (toolCalls !== undefined) message.tool_calls = toolCalls;
  return { m, role, message, toolCalls };
}

/**
 * The order of a conversation's messages after the system message, checked message by message (see Expect), and the
 * settings of each step read from them: `think_time_sec` on its first input message, `max_tokens` on its answer.
 */
class MessageOrder {
  /** The settings of each step, in order. */
  readonly turns: TurnSettings[] = [];
  /** Whether a message carried a setting (else the conversation has no `turns`). */
  extensions = false;
  #expect: Expect = 'user';
  #pending = new Set<string>();
  #stepOpen = false;

  /** Checks that `message` (with role `role`, read from `m`) may come next, sets a tool result's `tool_call_id` and records its settings. */
  add(m: Record<string, unknown>, role: string, message: ChatMessage, toolCalls: ToolCall[] | undefined, at: DatasetLocation): void {
    const expect = this.#expect;
    const pending = this.#pending;
    const allowed = expect === 'after-tool' ? role !== 'system' && (role !== 'tool' || pending.size > 0) && (role === 'tool' || pending.size === 0) : role === expect;
    if (!allowed) {
      const why = expect === 'after-tool' && pending.size > 0 ? `; calls ${[...pending].map((c) => JSON.stringify(c)).join(', ')} have no result yet` : '';
      throw new DatasetError(at, `expected ${expectedRoles(expect)}, got "${role}"${why}`);
    }
    if (role === 'tool') {
      const callId = m.tool_call_id;
      if (typeof callId !== 'string' || !pending.has(callId)) {
        throw new DatasetError(at, `expected "tool_call_id" to be the id of a call of the assistant message before, one of ${[...pending].map((c) => JSON.stringify(c)).join(', ')}; got ${shownValue(callId)}`);
      }
      pending.delete(callId);
      message.tool_call_id = callId;
    }
    if (role !== 'assistant' && !this.#stepOpen) this.#openStep(m, at);
    if (role === 'assistant') {
      this.#closeStep(m, toolCalls, at);
    } else if (role === 'tool') {
      this.#expect = 'after-tool';
    } else {
      this.#expect = 'assistant';
    }
  }

  /** Opens a step at its first input message, with that message's `think_time_sec`. */
  #openStep(m: Record<string, unknown>, at: DatasetLocation): void {
    // The first input message of a step opens it: its settings belong to the step's request.
    this.turns.push({});
    this.#stepOpen = true;
    if (m.think_time_sec !== undefined) {
      const seconds = extensionNumber(m.think_time_sec, 'think_time_sec', at);
      if (seconds > MAX_WAIT_SEC) throw new DatasetError(at, `expected "think_time_sec" to be at most ${MAX_WAIT_SEC.toLocaleString('en-US')} (a year), got ${shownValue(seconds)}`);
      this.turns[this.turns.length - 1]!.thinkTimeSec = seconds;
      this.extensions = true;
    }
  }

  /** Closes the step at its answer, with the answer's `max_tokens`; its tool calls are to be answered next. */
  #closeStep(m: Record<string, unknown>, toolCalls: ToolCall[] | undefined, at: DatasetLocation): void {
    const turn = this.turns[this.turns.length - 1]!;
    if (m.max_tokens !== undefined) {
      turn.maxTokens = extensionNumber(m.max_tokens, 'max_tokens', at);
      if (!Number.isInteger(turn.maxTokens) || turn.maxTokens < 1) throw new DatasetError(at, `expected "max_tokens" to be a positive integer, got ${turn.maxTokens}`);
      this.extensions = true;
    }
    this.#stepOpen = false;
    this.#pending = new Set(toolCalls?.map((c) => c.id));
    this.#expect = toolCalls === undefined ? 'user' : 'tool';
  }
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
