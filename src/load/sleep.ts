import { onAbort } from '../util/abort-listeners.js';
import { MAX_TIMER_MS, setLongTimeout } from '../util/long-timer.js';

/**
 * Waits `ms` milliseconds unless `signal` fires first. Resolves true when the full time passed, false when it was
 * cut short. Never rejects and never leaves a timer behind, so no wait in the load is unbounded.
 */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    // Rounded up: Node rounds timer delays to whole milliseconds, and waking early would send before the schedule.
    // Past setTimeout's 24.8 days, a chain of timers (util/long-timer.ts): a longer one would fire at once.
    const timer = ms <= MAX_TIMER_MS ? setTimeout(done, Math.ceil(ms)) : setLongTimeout(done, Math.ceil(ms));
    function done(): void {
      stopWaiting();
      resolve(true);
    }
    // Thousands of conversations may think at once: onAbort, not addEventListener (see util/abort-listeners.ts).
    const stopWaiting = onAbort(signal, () => {
      if ('clear' in timer) timer.clear();
      else clearTimeout(timer);
      resolve(false);
    });
  });
}
