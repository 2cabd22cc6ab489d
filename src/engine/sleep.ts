/**
 * Waits `ms` milliseconds unless `signal` fires first. Resolves true when the full time passed, false when it was
 * cut short. Never rejects and never leaves a timer behind, so no wait in the engine is unbounded.
 */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    // Rounded up: Node rounds timer delays to whole milliseconds, and waking early would send before the schedule.
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, Math.ceil(ms));
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
