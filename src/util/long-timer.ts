/**
 * The longest delay setTimeout holds: 2^31 − 1 ms (~24.8 days). A longer one fires after 1 ms, with a
 * TimeoutOverflowWarning (issue #35: a 30-day Retry-After was retried 5 times in 11 ms, a long --benchmark-timeout-sec
 * aborted every request at once).
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer that may be longer than setTimeout holds: cancel it with clear(). */
export interface LongTimer {
  clear(): void;
}

/**
 * Calls `fn` after `ms` milliseconds, however long: past MAX_TIMER_MS the wait is a chain of timers of at most that
 * each. `unref`: the timer does not keep the process alive.
 */
export function setLongTimeout(fn: () => void, ms: number, options: { unref?: boolean } = {}): LongTimer {
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const arm = (left: number): void => {
    const step = Math.min(Math.max(0, left), MAX_TIMER_MS);
    timer = setTimeout(() => {
      if (cleared) return;
      if (left > MAX_TIMER_MS) arm(left - MAX_TIMER_MS);
      else fn();
    }, step);
    if (options.unref === true) timer.unref();
  };
  arm(ms);
  return {
    clear() {
      cleared = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
