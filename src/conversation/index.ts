export type { Conversation, DatasetInfo } from './types.js';
export { loadConversations, parseJsonWithLocation } from './load.js';
export { validateConversation } from './validate.js';
export { demoConversations, type DemoDatasetOptions } from './demo.js';
