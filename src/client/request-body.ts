import { wireMessage } from '../tokenizer/chat-message.js';
import { letLoopGo } from '../util/loop-turns.js';
import type { ChatMessage } from '../tokenizer/types.js';
import type { ChatRequest } from './types.js';

/**
 * Each message's JSON as UTF-8 bytes, made once: a conversation's history holds the same message objects turn after
 * turn, so a 128k-token history is not re-encoded on every request, only copied into the body (issue #14). A large
 * message prepared in slices keeps its slices (a list of Buffers): it is never copied into one Buffer.
 */
const messageBytesCache = new WeakMap<ChatMessage, Buffer | readonly Buffer[]>();

/** Content longer than this is JSON-encoded in slices by prepareMessageBytes, letting the event loop go between them. */
const SLICE_CHARS = 256 * 1024;

/**
 * Bodies up to this many bytes are copied into one Buffer (one socket write, as before issue #14); larger ones are
 * sent as their list of chunks: copying a 10 MB body into one Buffer held the event loop ~8 ms.
 */
export const CHUNKED_BODY_BYTES = 1024 * 1024;

/** Small parts of a chunked body are joined into chunks of about this size (fewer socket writes). */
const JOIN_BYTES = 64 * 1024;

/** The JSON of one message in its wire shape, as UTF-8 bytes (its slices for a large prepared one), kept after the first time. */
function messageBytes(message: ChatMessage): Buffer | readonly Buffer[] {
  let bytes = messageBytesCache.get(message);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(wireMessage(message)));
    messageBytesCache.set(message, bytes);
  }
  return bytes;
}

/**
 * Encodes a message's JSON ahead of its send, in slices of its text with the event loop let go between them, so a
 * 10 MB message does not hold every other stream for the ~100 ms its JSON.stringify and UTF-8 copy take at once.
 * JSON escaping is per character, so escaped slices join into the escaped whole; slices never split a surrogate pair.
 * Returns undefined when there is nothing to wait for (the message was encoded before, or now, at once), so a turn
 * that prepares its whole history awaits only its new large messages: an await per message made each turn's cost
 * grow with the history (~0.2 ms a turn at 400 messages, issue #14).
 */
export function prepareMessageBytes(message: ChatMessage): Promise<void> | undefined {
  if (messageBytesCache.has(message)) return undefined;
  const text = message.content;
  // Content parts (images) are encoded at once: a data URL is one JSON string with nothing to escape.
  if (typeof text !== 'string' || text.length <= SLICE_CHARS) {
    messageBytes(message);
    return undefined;
  }
  return prepareInSlices(message, text);
}

async function prepareInSlices(message: ChatMessage, text: string): Promise<void> {
  const marker = '\u0000chatload-content\u0000';
  const [head, tail] = JSON.stringify(wireMessage({ ...message, content: marker })).split(JSON.stringify(marker)) as [string, string];
  const chunks: Buffer[] = [Buffer.from(`${head}"`)];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + SLICE_CHARS);
    const c = text.charCodeAt(end - 1);
    if (end < text.length && c >= 0xd800 && c <= 0xdbff) end -= 1;
    chunks.push(Buffer.from(JSON.stringify(text.slice(start, end)).slice(1, -1)));
    start = end;
    await letLoopGo();
  }
  chunks.push(Buffer.from(`"${tail}`));
  messageBytesCache.set(message, chunks);
}

/**
 * The request body as UTF-8 JSON: buildChatBody's fields, with `messages` copied from each message's kept bytes.
 * The same JSON as `JSON.stringify(buildChatBody(request))` up to key order. One Buffer up to CHUNKED_BODY_BYTES;
 * past it the body's chunks in order (see sendableBody), so a large message's bytes are never copied again.
 */
export function encodeChatBody(request: ChatRequest): Buffer | Buffer[] {
  const rest = buildChatBody({ ...request, messages: [] });
  // --extra-body may set `messages` itself: then it wins, as in buildChatBody.
  if (request.extraBody !== undefined && 'messages' in request.extraBody) return Buffer.from(JSON.stringify(rest));
  delete rest.messages;
  return encodeMessagesBody(request.messages, rest);
}

/**
 * `{"messages": [...], ...rest}` as UTF-8 JSON, each message copied from its kept bytes (see encodeChatBody): also the
 * body of a server's tokenize endpoints (client/server-tokenizer.ts), which take the same messages.
 */
export function encodeMessagesBody(messages: readonly ChatMessage[], rest: Record<string, unknown>): Buffer | Buffer[] {
  const parts: Buffer[] = [OPEN];
  let length = OPEN.length;
  messages.forEach((m, i) => {
    if (i > 0) {
      parts.push(COMMA);
      length += 1;
    }
    const bytes = messageBytes(m);
    if (Buffer.isBuffer(bytes)) {
      parts.push(bytes);
      length += bytes.length;
    } else {
      for (const b of bytes) {
        parts.push(b);
        length += b.length;
      }
    }
  });
  const fields = JSON.stringify(rest);
  const close = Buffer.from(fields === '{}' ? ']}' : `],${fields.slice(1)}`);
  parts.push(close);
  length += close.length;
  return length <= CHUNKED_BODY_BYTES ? Buffer.concat(parts, length) : joinSmallParts(parts);
}

const OPEN = Buffer.from('{"messages":[');
const COMMA = Buffer.from(',');

/** `parts` with each run of small ones joined into one Buffer of about JOIN_BYTES; large ones are kept as they are. */
function joinSmallParts(parts: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let run: Buffer[] = [];
  let runBytes = 0;
  const flush = (): void => {
    if (run.length > 0) out.push(run.length === 1 ? run[0]! : Buffer.concat(run, runBytes));
    run = [];
    runBytes = 0;
  };
  for (const part of parts) {
    if (part.length >= JOIN_BYTES) {
      flush();
      out.push(part);
      continue;
    }
    run.push(part);
    runBytes += part.length;
    if (runBytes >= JOIN_BYTES) flush();
  }
  flush();
  return out;
}

/** A chunked body lets the event loop go after each this many bytes handed to the socket (see pacedChunks). */
const PACE_BYTES = 1024 * 1024;

/**
 * A body for undici's dispatch(): a string or Buffer as it is; a list of chunks as their paced iterable (undici
 * writes an iterable chunk by chunk) with its content-length declared, so the server sees the same request as with
 * one Buffer. Each iteration starts over, so a stale-connection resend sends the very same bytes.
 */
export function sendableBody(body: string | Buffer | Buffer[], headers: Record<string, string>): { body: string | Buffer | AsyncIterable<Buffer>; headers: Record<string, string> } {
  if (!Array.isArray(body)) return { body, headers };
  let length = 0;
  for (const chunk of body) length += chunk.length;
  return { body: pacedChunks(body), headers: { ...headers, 'content-length': String(length) } };
}

/**
 * `chunks`, letting the event loop go after every PACE_BYTES (issue #14). undici waits between chunks only when the
 * socket's buffer is full, and on loopback the kernel takes megabytes per write as fast as the server reads them:
 * an array of 10 MB of chunks went out in bursts of several ms, one loop turn each, which every other stream's
 * timestamps waited for (bench/long-context.ts, `run`: 8 of 49 warm reps held a step over 5 ms, up to 8.9; paced, 1).
 */
function pacedChunks(chunks: readonly Buffer[]): AsyncIterable<Buffer> {
  return {
    async *[Symbol.asyncIterator]() {
      let since = 0;
      for (const chunk of chunks) {
        yield chunk;
        since += chunk.length;
        if (since >= PACE_BYTES) {
          since = 0;
          await letLoopGo();
        }
      }
    },
  };
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
  return withRequestFields(body, request);
}

/**
 * Adds to `body` what chat and completions requests share after their input: the optional sampling fields under
 * their OpenAI/vLLM names, `stream_options.include_usage` when streaming, `conversation_id`, and `extraBody` last.
 */
export function withRequestFields(body: Record<string, unknown>, request: ChatRequest): Record<string, unknown> {
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.minTokens !== undefined) body.min_tokens = request.minTokens;
  if (request.ignoreEos !== undefined) body.ignore_eos = request.ignoreEos;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.stream) body.stream_options = { include_usage: true };
  if (request.conversationId !== undefined) body.conversation_id = request.conversationId;
  if (request.returnTokenIds === true) body.return_token_ids = true;
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
