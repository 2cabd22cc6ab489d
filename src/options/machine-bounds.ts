import { availableParallelism, totalmem } from 'node:os';

/*
 * What this machine can hold (issue #35: `-p 99999999999` grew to 6.7 GB before sending anything, deaf to SIGTERM,
 * and `--workers 1000` made 1,011 threads and 10.4 GB). Flags past these are refused with one line, exit 2.
 */

/** Memory one concurrent request takes at least: its connection's kernel socket buffers and its stream's state. */
const BYTES_PER_CONCURRENT_REQUEST = 64 * 1024;
/** Worker threads per core: each is an event loop; more than a few per core only contend for it. */
const WORKERS_PER_CORE = 4;

/** The most concurrent requests (clients, --max-concurrency) this machine's memory holds, and why. */
export function concurrencyBound(): { max: number; why: string } {
  const bytes = totalmem();
  return {
    max: Math.max(1, Math.floor(bytes / BYTES_PER_CONCURRENT_REQUEST)),
    why: `one connection each takes at least 64 KiB, and this machine has ${(bytes / 2 ** 30).toFixed(1)} GiB; split a larger load over machines with --shard`,
  };
}

/** The most worker threads this machine's cores can use, and why. */
export function workersBound(): { max: number; why: string } {
  const cores = availableParallelism();
  return { max: Math.max(1, cores * WORKERS_PER_CORE), why: `${WORKERS_PER_CORE} per core on this machine's ${cores === 1 ? 'one core' : `${cores} cores`}; more threads only contend for them` };
}
