import { ExitCode } from '../errors/index.js';

/**
 * First SIGINT/SIGTERM: calls `onStop` (graceful: no new requests, results still written). A second one exits at
 * once with 130; requests.jsonl is intact because every record was already written with a synchronous append.
 * Returns a function that removes the handlers.
 */
export function onStopSignals(onStop: () => void): () => void {
  let count = 0;
  const handler = (): void => {
    count += 1;
    if (count === 1) onStop();
    else process.exit(ExitCode.interrupted);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
