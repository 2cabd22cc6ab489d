export { ChatloadError, ExitCode, isChatloadError } from './chatload-error.js';
export { ConfigError } from './config-error.js';
export { DatasetError, type DatasetLocation } from './dataset-error.js';
export { OutputError } from './output-error.js';
export { ServerRefusedError, ServerUnreachableError } from './server-error.js';
export { shownValue } from './shown-value.js';
