import * as z from 'zod';
import { option, positiveInt } from '../define.js';
import { shardSchema } from '../values/shard.js';
import { startAtSchema } from '../values/start-at.js';

/**
 * Concurrency at which `--workers auto` goes past one event loop. bench/scale.ts measures where one loop's
 * event-loop delay starts to distort inter-token latency; docs/SCALING.md records the figure.
 */
export const AUTO_WORKERS_CONCURRENCY = 512;

/** `--workers`: `auto`, or a whole number. */
const readWorkers = z.string().transform((value, ctx): number | 'auto' => {
  const trimmed = value.trim();
  if (trimmed === 'auto') return 'auto';
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  ctx.addIssue({ code: 'custom', message: `expected a positive integer or auto, got ${JSON.stringify(value)}` });
  return z.NEVER;
});

/** Past one core (worker threads) and past one machine (shards); docs/SCALING.md. */
export const scaleOptions = {
  workers: option({
    flags: '--workers <n>',
    group: 'scale',
    help: `worker threads, each with its own event loop and connection pool: a number, or auto (one loop below ${AUTO_WORKERS_CONCURRENCY} concurrent requests or with the built-in simulator, else one per core)`,
    read: readWorkers,
    schema: z.union([z.literal('auto'), positiveInt], { error: 'expected a positive integer or auto' }),
    default: 'auto',
  }),
  shard: option({
    flags: '--shard <i/n>',
    group: 'scale',
    help: 'run shard I of N (0-based) of a multi-machine run: conversations i with i % N == I, and 1/N of -p, -k, -n and the session rate',
    defaultText: 'from JOB_COMPLETION_INDEX and CHATLOAD_SHARD_COUNT when both are set',
    schema: shardSchema,
  }),
  startAt: option({
    flags: '--start-at <time>',
    group: 'scale',
    help: 'wall-clock start barrier for shards: an ISO 8601 time or epoch seconds; nothing is sent before it',
    schema: startAtSchema,
  }),
};
