// The client's public API: the engine imports from here.
export { ChatClient, type ChatClientOptions, type ModelInfo } from './chat-client.js';
export { isRetryable, retryDelayMs } from './retry.js';
export { SseReader, type SseEventHandler, type SseReaderOptions } from './sse-reader.js';
export { parseRetryAfterMs } from './retry-after.js';
export { buildChatBody } from './request-body.js';
export type { ChatRequest, ErrorKind, RequestError, ServerUsage, StreamResult } from './types.js';
