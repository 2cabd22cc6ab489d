import { chatEndpoint } from './chat.js';
import { completionsEndpoint } from './completions.js';
import type { ApiEndpoint, EndpointName } from './endpoint.js';
import { responsesEndpoint } from './responses.js';

export type { ApiEndpoint, EndpointName, ResponseReader } from './endpoint.js';

/** The endpoint module of each --endpoint value. */
export const ENDPOINTS: Readonly<Record<EndpointName, ApiEndpoint>> = Object.freeze({
  chat: chatEndpoint,
  responses: responsesEndpoint,
  completions: completionsEndpoint,
});
