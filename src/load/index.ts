export { runLoad } from './run-load.js';
export type { ConversationCounts, LoadInput, LoadObserver, LoadResult } from './types.js';
export type { StopReason } from './stop.js';
