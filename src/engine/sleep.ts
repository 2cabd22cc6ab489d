import { onAbort } from '../util/abort-listeners.js';

/**
 * Waits `ms` milliseconds unless `signal` fires first. Resolves true when the full time passed, false when it was
 * cut short. Never rejects and never leaves a timer behind, so no wait in the engine is unbounded.
 */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    // Rounded up: Node rounds timer delays to whole milliseconds, and waking early would send before the schedule.
    const timer = setTimeout(() => {
      stopWaiting();
      resolve(true);
    }, Math.ceil(ms));
    // Thousands of conversations may think at once: onAbort, not addEventListener (see util/abort-listeners.ts).
    const stopWaiting = onAbort(signal, () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
