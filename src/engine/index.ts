export { runEngine } from './engine.js';
export type { ConversationCounts, EngineInput, EngineObserver, EngineResult } from './types.js';
export type { StopReason } from './stop.js';
