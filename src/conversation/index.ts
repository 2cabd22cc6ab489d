export type { Conversation, DatasetInfo, TurnSettings } from './types.js';
export { loadConversations, loadDataset, type LoadOptions, type LoadedDataset, type DatasetFormat } from './load.js';
export { parseJsonWithLocation } from './json-location.js';
export { validateConversation } from './validate.js';
export { demoConversations, type DemoDatasetOptions } from './demo.js';
export { ShareGptConverter, describeShareGptReport, isShareGptItem, type ShareGptOptions, type ShareGptReport } from './sharegpt.js';
export { streamJsonList, type JsonListElement } from './json-stream.js';
export { writeConversations, toFileConversation } from './write.js';
export { SIZE_BOUNDS, type SizeBounds } from './size-bounds.js';
