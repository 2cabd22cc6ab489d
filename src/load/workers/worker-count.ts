import { availableParallelism } from 'node:os';
import { AUTO_WORKERS_CONCURRENCY } from '../../options/table/scale.js';

export { AUTO_WORKERS_CONCURRENCY };

/**
 * How many worker threads to run: the --workers number, or for `auto` one event loop below
 * AUTO_WORKERS_CONCURRENCY requests known to be in flight at most (or when the built-in simulator needs the other
 * core), else one per core. An uncapped open loop has no known peak (0: it depends on the server), so `auto` keeps
 * one event loop there; ask for --workers explicitly.
 */
export function workerCount(workers: number | 'auto', peakConcurrency: number, embeddedSimulator: boolean): number {
  if (workers !== 'auto') return workers;
  if (embeddedSimulator || peakConcurrency < AUTO_WORKERS_CONCURRENCY) return 1;
  return Math.max(1, availableParallelism());
}
