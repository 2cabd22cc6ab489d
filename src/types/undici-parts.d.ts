// Types for the three undici modules src/util/undici.ts loads by path: they are the objects undici's index exports
// (Agent, the Dispatcher's request method, getGlobalDispatcher), whose types undici ships for the index only.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  /** Dispatcher.prototype.request: call it with the dispatcher as `this`. */
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  export default request;
}
declare module 'undici/lib/global.js' {
  import type { Dispatcher } from 'undici';
  export function getGlobalDispatcher(): Dispatcher;
}
