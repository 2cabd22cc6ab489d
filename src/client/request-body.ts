import type { ChatRequest } from './types.js';

/**
 * The JSON body of a chat completion request: `model`, `messages`, `stream`, the optional sampling fields under
 * their OpenAI/vLLM names, `stream_options.include_usage` when streaming (so the server reports token counts),
 * `conversation_id` when given, and `extraBody` merged last (it may override any of them).
 */
export function buildChatBody(request: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages, stream: request.stream };
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
