import { isOpenLoop, type RunOptions } from '../options/run-options.js';
import type { ChatClientOptions } from './chat-client.js';

/**
 * The ChatClient options of a run, the same in the main thread and in every worker: the timeouts in milliseconds, and
 * a connection pool as large as the requests the run can have in flight (every client of the closed loop; for
 * open-loop sessions the --max-concurrency cap, or generously), so no request ever waits inside the pool.
 */
export function chatClientOptionsFor(options: RunOptions, url: string, headers: Readonly<Record<string, string>>): ChatClientOptions {
  const seconds = (value: number | undefined): number | undefined => (value === undefined ? undefined : value * 1000);
  return {
    baseUrl: url,
    apiKey: options.apiKey,
    headers,
    connections: isOpenLoop(options) ? (options.maxConcurrency ?? 4096) : Math.max(1, options.numClients),
    requestTimeoutMs: options.requestTimeoutSec * 1000,
    ttftTimeoutMs: seconds(options.ttftTimeoutSec),
    idleTimeoutMs: seconds(options.idleTimeoutSec),
  };
}
