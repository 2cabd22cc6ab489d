import { availableParallelism } from 'node:os';
import { isOpenLoop, type RunOptions } from '../../options/run-options.js';

/**
 * Concurrency at which `--workers auto` goes past one event loop. bench/scale.ts measures where one loop's
 * event-loop delay starts to distort inter-token latency; docs/SCALING.md records the figure.
 */
export const AUTO_WORKERS_CONCURRENCY = 512;

/**
 * Requests the run is known to have in flight at most: the clients of the closed loop, or the open loop's
 * --max-concurrency. An uncapped open loop has no known peak (it depends on the server), so it counts as 0 and
 * `auto` keeps one event loop there; ask for --workers explicitly.
 */
export function peakConcurrency(options: RunOptions): number {
  return isOpenLoop(options) ? (options.maxConcurrency ?? 0) : options.numClients;
}

/**
 * How many worker threads to run: the --workers number, or for `auto` one event loop below
 * AUTO_WORKERS_CONCURRENCY (or when the built-in simulator needs the other core), else one per core.
 */
export function workerCount(options: RunOptions, embeddedSimulator: boolean): number {
  if (options.workers !== 'auto') return options.workers;
  if (embeddedSimulator || peakConcurrency(options) < AUTO_WORKERS_CONCURRENCY) return 1;
  return Math.max(1, availableParallelism());
}
