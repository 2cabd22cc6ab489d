import type { ChatMessage, ToolCall } from '../tokenizer/index.js';
import { HttpError } from './http-util.js';

/** A validated generation request (chat or plain completion), as the server uses it. Token counts in tokens. */
export interface GenerationParams {
  /** Chat messages (chat endpoint) or null (completions endpoint, see `prompt`). */
  messages: ChatMessage[] | null;
  /** The completion prompt (completions endpoint). */
  prompt: string | null;
  model: string | undefined;
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
  minTokens: number;
  ignoreEos: boolean;
  temperature: number | undefined;
  seed: number | undefined;
  /** Names of the request's function tools (empty without `tools`, or with `tool_choice: "none"`). */
  toolNames: string[];
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function bad(message: string, param: string | null = null): HttpError {
  return new HttpError(400, message, { param });
}

function optionalInt(body: Record<string, unknown>, key: string, min: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(`'${key}' must be an integer, got ${JSON.stringify(v)}`, key);
  if (v < min) throw bad(`'${key}' must be at least ${min}, got ${v}`, key);
  return v;
}

function optionalNumber(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(`'${key}' must be a number, got ${JSON.stringify(v)}`, key);
  return v;
}

function optionalBool(body: Record<string, unknown>, key: string): boolean | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw bad(`'${key}' must be a boolean, got ${JSON.stringify(v)}`, key);
  return v;
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value)) throw bad("'messages' is required and must be a non-empty list", 'messages');
  if (value.length === 0) throw bad("'messages' must not be empty", 'messages');
  return value.map((m: unknown, i) => {
    if (m === null || typeof m !== 'object') throw bad(`messages[${i}] must be an object`, 'messages');
    const { role, content, tool_calls: toolCalls } = m as Record<string, unknown>;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw bad(`messages[${i}].role must be one of system, user, assistant, tool; got ${JSON.stringify(role)}`, 'messages');
    }
    const message: ChatMessage = { role: role as ChatMessage['role'], content: messageText(content, role, Array.isArray(toolCalls), i) };
    if (Array.isArray(toolCalls)) message.tool_calls = toolCalls.map((call, j) => toolCall(call, i, j));
    return message;
  });
}

/** A message's text: a string, the text parts of a content array (images count nothing), or '' beside tool calls. */
function messageText(content: unknown, role: string, hasToolCalls: boolean, i: number): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown, j) => {
        const p = part as { type?: unknown; text?: unknown } | null;
        if (p === null || typeof p !== 'object') throw bad(`messages[${i}].content[${j}] must be an object`, 'messages');
        if (p.type === 'text') {
          if (typeof p.text !== 'string') throw bad(`messages[${i}].content[${j}].text must be a string`, 'messages');
          return p.text;
        }
        return '';
      })
      .filter((t) => t !== '')
      .join('\n');
  }
  if ((content === null || content === undefined) && role === 'assistant' && hasToolCalls) return '';
  throw bad(`messages[${i}].content must be a string or a list of content parts`, 'messages');
}

function toolCall(value: unknown, i: number, j: number): ToolCall {
  const call = value as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
  const fn = call?.function;
  if (call === null || typeof call !== 'object' || typeof call.id !== 'string' || typeof fn?.name !== 'string') {
    throw bad(`messages[${i}].tool_calls[${j}] must be {"id", "type": "function", "function": {"name", "arguments"}}`, 'messages');
  }
  return { id: call.id, type: 'function', function: { name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}) } };
}

/** The function names of `tools`, or none when `tool_choice` is "none". */
function toolNames(body: Record<string, unknown>): string[] {
  const tools = body.tools;
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw bad("'tools' must be a list", 'tools');
  if (body.tool_choice === 'none') return [];
  return tools.map((tool: unknown, i) => {
    const name = (tool as { function?: { name?: unknown } } | null)?.function?.name;
    if (typeof name !== 'string') throw bad(`tools[${i}].function.name must be a string`, 'tools');
    return name;
  });
}

/**
 * Validates a chat (`kind` 'chat') or completions ('completion') body. Unknown fields (e.g. `conversation_id`) are
 * ignored. Throws a 400 HttpError naming the bad field.
 */
export function parseGenerationBody(body: unknown, kind: 'chat' | 'completion'): GenerationParams {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw bad('The request body must be a JSON object');
  const b = body as Record<string, unknown>;
  let messages: ChatMessage[] | null = null;
  let prompt: string | null = null;
  if (kind === 'chat') messages = parseMessages(b.messages);
  else {
    const p = b.prompt;
    if (typeof p === 'string') prompt = p;
    else if (Array.isArray(p) && p.length === 1 && typeof p[0] === 'string') prompt = p[0];
    else throw bad("'prompt' is required and must be a string", 'prompt');
  }
  if (b.model !== undefined && b.model !== null && typeof b.model !== 'string') throw bad("'model' must be a string", 'model');
  const n = optionalInt(b, 'n', 1);
  if (n !== undefined && n !== 1) throw bad(`Only n=1 is supported by the simulator, got n=${n}`, 'n');
  const maxTokens = optionalInt(b, 'max_tokens', 0) ?? optionalInt(b, 'max_completion_tokens', 0);
  if (maxTokens === 0) throw bad("'max_tokens' must be at least 1, got 0", 'max_tokens');
  const minTokens = optionalInt(b, 'min_tokens', 0) ?? 0;
  if (maxTokens !== undefined && minTokens > maxTokens) throw bad(`min_tokens (${minTokens}) must be less than or equal to max_tokens (${maxTokens})`, 'min_tokens');
  const temperature = optionalNumber(b, 'temperature');
  if (temperature !== undefined && temperature < 0) throw bad(`'temperature' must be non-negative, got ${temperature}`, 'temperature');
  const seed = optionalInt(b, 'seed', Number.MIN_SAFE_INTEGER);
  const stream = optionalBool(b, 'stream') ?? false;
  let includeUsage = false;
  const so = b.stream_options;
  if (so !== undefined && so !== null) {
    if (typeof so !== 'object' || Array.isArray(so)) throw bad("'stream_options' must be an object", 'stream_options');
    includeUsage = optionalBool(so as Record<string, unknown>, 'include_usage') ?? false;
  }
  return {
    messages,
    prompt,
    model: b.model as string | undefined,
    stream,
    includeUsage,
    maxTokens,
    minTokens,
    ignoreEos: optionalBool(b, 'ignore_eos') ?? false,
    temperature,
    seed,
    toolNames: kind === 'chat' ? toolNames(b) : [],
  };
}
