import { buildChatBody } from '../request-body.js';
import type { ApiEndpoint } from './endpoint.js';

/**
 * `/v1/chat/completions`: `messages` in, `choices[0].delta` chunks out, ended by `data: [DONE]`. The body builder
 * (request-body.ts) and the reader (the ResponseCollector's own chat reading) are the chat path's, unchanged.
 */
export const chatEndpoint: ApiEndpoint = {
  name: 'chat',
  path: '/v1/chat/completions',
  body: buildChatBody,
  reader: (collector) => collector,
};
