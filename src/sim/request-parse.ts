import { PartsText, type ChatMessage, type ToolCall } from '../tokenizer/index.js';
import { HttpError } from './http-util.js';
import type { PiecesAt } from './large-strings.js';
import { shownValue } from '../errors/shown-value.js';
import { readAudioHeader } from '../util/audio-header.js';

/**
 * A content part the simulator reads: text, an image (counted as `tokens_per_image` tokens), or audio (its duration
 * in seconds, read from its header, counted as `tokens_per_audio_second` tokens a second): docs/SIMULATOR.md.
 */
export type SimContentPart = { type: 'text'; text: string } | { type: 'image_url'; url: string } | { type: 'input_audio'; data: string; format: 'wav' | 'mp3'; seconds: number };

/** A chat message as the simulator reads it: its content a string or a list of text, image and audio parts; an assistant's tool calls. */
export interface SimMessage {
  role: ChatMessage['role'];
  content: string | SimContentPart[];
  tool_calls?: ToolCall[];
}

/** A validated generation request (chat or plain completion), as the server uses it. Token counts in tokens. */
export interface GenerationParams {
  /** Chat messages (chat endpoint) or null (completions endpoint, see `prompt`). */
  messages: SimMessage[] | null;
  /** The completion prompt (completions endpoint); a large one may be its pieces (see piecesAtFor). */
  prompt: string | PartsText | null;
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
  /**
   * The request's tool definitions as sent (chat only): rendered into the prompt as vLLM renders them, whatever
   * `tool_choice` says (vLLM's default), so they count as prompt tokens and are cached (tokenizer/tools-prompt.ts).
   */
  tools: unknown[] | undefined;
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/**
 * Where a large string of a `kind` body may come as its pieces (readJsonBody's PiecesAt, issue #14): a chat message's
 * content and a completion's prompt, which are only ever rendered and tokenized, both of which read a PartsText. A
 * message's content in pieces is taken as its text parts, which the simulator renders as that string (text parts are
 * joined with no separator): never joined into one 3 MB string in one piece. Elsewhere large strings come whole.
 */
export function piecesAtFor(kind: 'chat' | 'completion' | 'responses'): PiecesAt | undefined {
  if (kind === 'chat') return (path) => path.length === 3 && path[0] === 'messages' && typeof path[1] === 'number' && path[2] === 'content';
  if (kind === 'completion') return (path) => path[0] === 'prompt' && (path.length === 1 || (path.length === 2 && path[1] === 0));
  return undefined;
}

function bad(message: string, param: string | null = null): HttpError {
  return new HttpError(400, message, { param });
}

function optionalInt(body: Record<string, unknown>, key: string, min: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(`'${key}' must be an integer, got ${shownValue(v)}`, key);
  if (v < min) throw bad(`'${key}' must be at least ${min}, got ${v}`, key);
  return v;
}

function optionalNumber(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(`'${key}' must be a number, got ${shownValue(v)}`, key);
  return v;
}

function optionalBool(body: Record<string, unknown>, key: string): boolean | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw bad(`'${key}' must be a boolean, got ${shownValue(v)}`, key);
  return v;
}

/**
 * An `input_audio` part (`{data, format}`, base64 WAV or MP3, OpenAI's chat shape) with its duration read from its
 * header (util/audio-header.ts); 400 naming the part when its format is neither or its header cannot be read, as a
 * server that cannot decode the audio answers.
 */
function audioPart(value: unknown, at: string, param: string): SimContentPart {
  const { data, format } = (value ?? {}) as { data?: unknown; format?: unknown };
  if ((format !== 'wav' && format !== 'mp3') || typeof data !== 'string' || data.length === 0) {
    throw bad(`${at} must be an audio part {type:"input_audio",input_audio:{data,format}} with format "wav" or "mp3"`, param);
  }
  const header = readAudioHeader(data, format);
  if (typeof header === 'string') throw bad(`${at}: the audio cannot be read: ${header}`, param);
  return { type: 'input_audio', data, format, seconds: header.seconds };
}

/**
 * A chat content part list (OpenAI's `[{type:"text",text}, {type:"image_url",image_url:{url}},
 * {type:"input_audio",input_audio:{data,format}}]`) as SimContentParts; 400 naming the part otherwise.
 */
function parseParts(parts: unknown[], where: string, param: string): SimContentPart[] {
  return parts.map((part: unknown, j) => {
    const p = (part ?? {}) as Record<string, unknown>;
    if (p.type === 'text' && typeof p.text === 'string') return { type: 'text', text: p.text };
    if (p.type === 'image_url') {
      const url = typeof p.image_url === 'string' ? p.image_url : (p.image_url as { url?: unknown } | null)?.url;
      if (typeof url === 'string' && url.length > 0) return { type: 'image_url', url };
    }
    if (p.type === 'input_audio') return audioPart(p.input_audio, `${where}.content[${j}]`, param);
    throw bad(`${where}.content[${j}] must be a text part {type:"text",text}, an image part {type:"image_url",image_url:{url}} or an audio part {type:"input_audio",input_audio:{data,format}}`, param);
  });
}

function parseMessages(value: unknown): SimMessage[] {
  if (!Array.isArray(value)) throw bad("'messages' is required and must be a non-empty list", 'messages');
  if (value.length === 0) throw bad("'messages' must not be empty", 'messages');
  return value.map((m: unknown, i) => {
    if (m === null || typeof m !== 'object') throw bad(`messages[${i}] must be an object`, 'messages');
    const { role, content, tool_calls: toolCalls } = m as Record<string, unknown>;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw bad(`messages[${i}].role must be one of system, user, assistant, tool; got ${JSON.stringify(role)}`, 'messages');
    }
    const message: SimMessage = { role: role as ChatMessage['role'], content: messageContent(content, role, Array.isArray(toolCalls), i) };
    if (Array.isArray(toolCalls)) message.tool_calls = toolCalls.map((call, j) => toolCall(call, i, j));
    return message;
  });
}

/** A message's content: a string, a list of text, image and audio parts, or '' (null or absent) beside tool calls. */
function messageContent(content: unknown, role: string, hasToolCalls: boolean, i: number): SimMessage['content'] {
  if (typeof content === 'string') return content;
  if (content instanceof PartsText) return content.parts.map((text) => ({ type: 'text', text }));
  if (Array.isArray(content)) return parseParts(content, `messages[${i}]`, 'messages');
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
  let messages: SimMessage[] | null = null;
  let prompt: string | PartsText | null = null;
  if (kind === 'chat') messages = parseMessages(b.messages);
  else {
    const p = b.prompt;
    if (typeof p === 'string' || p instanceof PartsText) prompt = p;
    else if (Array.isArray(p) && p.length === 1 && (typeof p[0] === 'string' || p[0] instanceof PartsText)) prompt = p[0] as string | PartsText;
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
    tools: kind === 'chat' && Array.isArray(b.tools) && b.tools.length > 0 ? b.tools : undefined,
  };
}

/** A validated `/v1/responses` body: the generation fields, plus the Responses API's state fields. */
export interface ResponsesParams extends GenerationParams {
  /** The new messages of this request: `instructions` (as a system message) and the `input` items. */
  messages: SimMessage[];
  /** The stored response whose history comes before `messages`, if any. */
  previousResponseId: string | undefined;
  /** Keep this response for a later previous_response_id (OpenAI's default: true). */
  store: boolean;
}

const RESPONSES_ROLES: Readonly<Record<string, ChatMessage['role']>> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant' };
const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);

/** One Responses input item (`{role, content}`, `type: "message"` optional) as a chat message; 400 on anything else. */
function responsesItem(item: unknown, i: number): SimMessage {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) throw bad(`input[${i}] must be an object`, 'input');
  const { type, role, content } = item as Record<string, unknown>;
  if (type !== undefined && type !== 'message') throw bad(`input[${i}]: the simulator accepts message, function_call and function_call_output items, got type ${JSON.stringify(type)}`, 'input');
  const chatRole = typeof role === 'string' ? RESPONSES_ROLES[role] : undefined;
  if (chatRole === undefined) throw bad(`input[${i}].role must be one of system, developer, user, assistant; got ${JSON.stringify(role)}`, 'input');
  if (typeof content === 'string') return { role: chatRole, content };
  if (!Array.isArray(content)) throw bad(`input[${i}].content must be a string or a list of content parts`, 'input');
  const parts = content.map((part: unknown, j): SimContentPart => {
    const p = (part ?? {}) as Record<string, unknown>;
    if (typeof p.type === 'string' && TEXT_PARTS.has(p.type) && typeof p.text === 'string') return { type: 'text', text: p.text };
    if (p.type === 'input_image' && typeof p.image_url === 'string' && p.image_url.length > 0) return { type: 'image_url', url: p.image_url };
    throw bad(`input[${i}].content[${j}] must be an input_text, output_text or input_image part`, 'input');
  });
  return { role: chatRole, content: parts };
}

/**
 * Adds one Responses input item to `messages`: a message item; a `function_call` item as a tool call of an assistant
 * message (the one just before when it is an assistant's, as the client splits one message's calls into items); a
 * `function_call_output` item as a `tool` message. 400 on anything else.
 */
function addResponsesItem(messages: SimMessage[], item: unknown, i: number): void {
  const { type, call_id: callId, name, arguments: args, output } = (item ?? {}) as Record<string, unknown>;
  if (type === 'function_call') {
    if (typeof callId !== 'string' || typeof name !== 'string' || typeof args !== 'string') throw bad(`input[${i}]: a function_call item needs "call_id", "name" and "arguments" strings`, 'input');
    const call: ToolCall = { id: callId, type: 'function', function: { name, arguments: args } };
    const last = messages[messages.length - 1];
    if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
    else messages.push({ role: 'assistant', content: '', tool_calls: [call] });
    return;
  }
  if (type === 'function_call_output') {
    if (typeof callId !== 'string' || typeof output !== 'string') throw bad(`input[${i}]: a function_call_output item needs "call_id" and "output" strings`, 'input');
    messages.push({ role: 'tool', content: output });
    return;
  }
  messages.push(responsesItem(item, i));
}

/**
 * Validates a `/v1/responses` body: `input` (a string, or a list of message items), `instructions`,
 * `previous_response_id`, `store`, `max_output_tokens`, and the sampling fields chat takes. Throws a 400 HttpError.
 */
export function parseResponsesBody(body: unknown): ResponsesParams {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw bad('The request body must be a JSON object');
  const b = body as Record<string, unknown>;
  const messages: SimMessage[] = [];
  if (b.instructions !== undefined && b.instructions !== null) {
    if (typeof b.instructions !== 'string') throw bad("'instructions' must be a string", 'instructions');
    messages.push({ role: 'system', content: b.instructions });
  }
  if (typeof b.input === 'string') messages.push({ role: 'user', content: b.input });
  else if (Array.isArray(b.input)) b.input.forEach((item: unknown, i) => addResponsesItem(messages, item, i));
  else throw bad("'input' is required and must be a string or a list of items", 'input');
  const previous = b.previous_response_id;
  if (previous !== undefined && previous !== null && typeof previous !== 'string') throw bad("'previous_response_id' must be a string", 'previous_response_id');
  if (messages.length === 0 && (previous === undefined || previous === null)) throw bad("'input' must not be empty", 'input');
  // The chat fields under their chat names; max_output_tokens is the Responses API's max_tokens.
  const { max_output_tokens: maxOutput, input: _input, messages: _messages, ...rest } = b;
  const params = parseGenerationBody({ ...rest, messages: [{ role: 'user', content: '' }], max_tokens: maxOutput, stream_options: undefined }, 'chat');
  return {
    ...params,
    messages,
    // The Responses API always reports usage, streamed or not.
    includeUsage: true,
    previousResponseId: typeof previous === 'string' ? previous : undefined,
    store: optionalBool(b, 'store') ?? true,
  };
}
