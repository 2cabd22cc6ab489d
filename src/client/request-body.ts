import { wireMessage } from '../tokenizer/chat-message.js';
import type { ChatMessage } from '../tokenizer/types.js';
import type { ChatRequest } from './types.js';

/**
 * Each message's JSON, made once: a conversation's history holds the same message objects turn after turn, so a
 * 128k-token history is not re-encoded on every request, only joined (issue #14).
 */
const messageJsonCache = new WeakMap<ChatMessage, string>();

/** The JSON text of one message in its wire shape, from the cache after the first time. */
export function messageJson(message: ChatMessage): string {
  let json = messageJsonCache.get(message);
  if (json === undefined) {
    json = JSON.stringify(wireMessage(message));
    messageJsonCache.set(message, json);
  }
  return json;
}

/**
 * The request body as JSON text: buildChatBody's fields, with `messages` joined from each message's cached JSON.
 * The same JSON as `JSON.stringify(buildChatBody(request))` up to key order.
 */
export function encodeChatBody(request: ChatRequest): string {
  const rest = buildChatBody({ ...request, messages: [] });
  // --extra-body may set `messages` itself: then it wins, as in buildChatBody.
  if (request.extraBody !== undefined && 'messages' in request.extraBody) return JSON.stringify(rest);
  delete rest.messages;
  let messages = '';
  for (const m of request.messages) messages += messages === '' ? messageJson(m) : `,${messageJson(m)}`;
  return `{"messages":[${messages}],${JSON.stringify(rest).slice(1)}`;
}

/**
 * The JSON body of a chat completion request: `model`, `messages`, `stream`, the optional sampling fields under
 * their OpenAI/vLLM names, `stream_options.include_usage` when streaming (so the server reports token counts),
 * `conversation_id` when given, `tools` when the conversation has them, and `extraBody` merged last (it may
 * override any of them). Messages are in their wire shape (content parts, tool calls).
 */
export function buildChatBody(request: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages.map(wireMessage), stream: request.stream };
  if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.minTokens !== undefined) body.min_tokens = request.minTokens;
  if (request.ignoreEos !== undefined) body.ignore_eos = request.ignoreEos;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.stream) body.stream_options = { include_usage: true };
  if (request.conversationId !== undefined) body.conversation_id = request.conversationId;
  if (request.extraBody !== undefined) Object.assign(body, request.extraBody);
  return body;
}

/**
 * Normalizes a base URL: no trailing slash, and no trailing `/v1` (requests add `/v1/...` themselves), so both
 * `http://h:p` and `http://h:p/v1` work. Returns undefined when `baseUrl` is not an http(s) URL.
 */
export function normalizeBaseUrl(baseUrl: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  let path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/v1')) path = path.slice(0, -3);
  url.pathname = path;
  url.search = '';
  url.hash = '';
  return url;
}
