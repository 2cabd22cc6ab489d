import type { Dispatcher } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import apiRequest from 'undici/lib/api/api-request.js';
import { getGlobalDispatcher } from 'undici/lib/global.js';

// chatload uses two things of undici: an Agent (whose dispatch() the chat client calls with its own handler) and
// request(). undici's index loads all of undici besides (fetch, WebSocket, caches, cookies, mocks: 1.1 MB of code,
// ~30 ms of every start-up, issue 17), so chatload loads those two modules by path. They are the same objects the
// index exports; test/util/undici.test.ts checks that they still are.

/** undici's Agent (a pool of connections per origin). */
export const Agent = AgentClass;
export type Agent = InstanceType<typeof AgentClass>;
export type AgentOptions = ConstructorParameters<typeof AgentClass>[0];

/** What request() takes: undici's options without origin and path (they come from the URL), and the dispatcher. */
export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method?: Dispatcher.HttpMethod;
  /** The agent to send through; undici's global dispatcher when absent. */
  dispatcher?: Dispatcher;
};

/** undici's `request(url, options)`: the same call its index makes (origin and path from the URL, GET by default). */
export function request(url: string | URL, options: RequestOptions = {}): Promise<Dispatcher.ResponseData> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const { dispatcher = getGlobalDispatcher(), ...rest } = options;
  return apiRequest.call(dispatcher, {
    ...rest,
    origin: target.origin,
    path: target.search ? `${target.pathname}${target.search}` : target.pathname,
    method: rest.method ?? (rest.body ? 'PUT' : 'GET'),
  });
}

/**
 * What dispatch() takes: undici's DispatchOptions, with the body its docs (docs/api/Dispatcher.md, "body") and code
 * accept but its types omit: an async iterable of chunks, written chunk by chunk (a large chat body, paced:
 * client/request-body.ts).
 */
export type DispatchOptions = Omit<Dispatcher.DispatchOptions, 'body'> & { body?: Dispatcher.DispatchOptions['body'] | AsyncIterable<Uint8Array> };

/**
 * `dispatcher.dispatch(options, handler)`: undici's lowest-level call, the one request() is built on. The handler's
 * callbacks get the response head and each body chunk as the HTTP parser produces them, with no stream in between.
 */
export function dispatch(dispatcher: Dispatcher, options: DispatchOptions, handler: Dispatcher.DispatchHandler): void {
  // An async iterable body is documented and handled (see DispatchOptions); only undici's types leave it out.
  dispatcher.dispatch(options as Dispatcher.DispatchOptions, handler);
}
