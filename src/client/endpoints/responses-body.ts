import type { ChatRequest } from '../types.js';

/**
 * One chat content part as a Responses API input content part: `text` becomes `input_text` (`output_text` in an
 * assistant message, the form the API returns it in), `image_url` becomes `input_image` with the URL as a string.
 * Unknown parts pass unchanged.
 */
function responsesPart(part: unknown, role: string): unknown {
  if (part === null || typeof part !== 'object') return part;
  const p = part as { type?: unknown; text?: unknown; image_url?: unknown };
  if (p.type === 'text') return { type: role === 'assistant' ? 'output_text' : 'input_text', text: p.text };
  if (p.type === 'image_url') {
    const url = typeof p.image_url === 'string' ? p.image_url : (p.image_url as { url?: unknown } | null)?.url;
    return { type: 'input_image', image_url: url };
  }
  return part;
}

/**
 * A chat message as a Responses API input item (an EasyInputMessage: `{role, content}`, content a string or parts).
 * Reasoning kept with --keep-reasoning is not sent: the Responses API takes reasoning back only as its own items.
 */
export function responsesInputItem(message: ChatRequest['messages'][number]): Record<string, unknown> {
  const content: unknown = message.content;
  return { role: message.role, content: Array.isArray(content) ? content.map((part) => responsesPart(part, message.role)) : content };
}

/**
 * A history message as Responses API input items: a chat message as one item; an assistant's tool calls as
 * `function_call` items (after its text, if any) and a tool result as a `function_call_output` item, the API's own
 * forms. Tool definitions are not sent and streamed calls not read: tool-calling replays use the chat endpoint.
 */
function responsesInputItems(message: ChatRequest['messages'][number]): Record<string, unknown>[] {
  if (message.role === 'tool') {
    const output = typeof message.content === 'string' ? message.content : message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
    return [{ type: 'function_call_output', call_id: message.tool_call_id, output }];
  }
  if (message.tool_calls === undefined) return [responsesInputItem(message)];
  const calls = message.tool_calls.map((c) => ({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments }));
  return message.content === '' ? calls : [responsesInputItem(message), ...calls];
}

/**
 * The body of a `/v1/responses` request. The history goes as `input` items, all of it with `store: false` (nothing
 * kept on the server), or, with `previousResponse` (--responses-state server), only the messages after what the
 * server holds, with `previous_response_id` and `store: true`. max_tokens is `max_output_tokens`; the other sampling
 * fields keep their chat names (vLLM reads them), `extraBody` is merged last.
 */
export function buildResponsesBody(request: ChatRequest): Record<string, unknown> {
  const held = request.previousResponse;
  const messages = held === undefined ? request.messages : request.messages.slice(held.messagesHeld);
  const body: Record<string, unknown> = { model: request.model, input: messages.flatMap(responsesInputItems), stream: request.stream };
  if (held !== undefined) body.previous_response_id = held.id;
  body.store = held !== undefined || request.storeResponse === true;
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.minTokens !== undefined) body.min_tokens = request.minTokens;
  if (request.ignoreEos !== undefined) body.ignore_eos = request.ignoreEos;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.conversationId !== undefined) body.conversation_id = request.conversationId;
  if (request.extraBody !== undefined) Object.assign(body, request.extraBody);
  return body;
}
