import { buildChatBody, encodeChatBody } from '../request-body.js';
import type { ApiEndpoint } from './endpoint.js';

/**
 * `/v1/chat/completions`: `messages` in, `choices[0].delta` chunks out, ended by `data: [DONE]`. The body builder
 * (request-body.ts: each message's JSON kept and joined) and the reader (the ResponseCollector's own chat reading,
 * tool-call deltas included) are the chat path's.
 */
export const chatEndpoint: ApiEndpoint = {
  name: 'chat',
  path: '/v1/chat/completions',
  body: buildChatBody,
  encode: encodeChatBody,
  reader: (collector) => collector,
};
