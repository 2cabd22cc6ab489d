import type { RequestError } from './types.js';

/** HTTP statuses worth retrying: request timeout, rate limit, and the transient server errors. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/** First backoff step (ms) and the cap (ms) of the exponential backoff. */
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;

/**
 * Whether a failed request may succeed if sent again: connection failures, the three timeouts, a truncated stream,
 * and HTTP 408/429/500/502/503/504. Not: DNS failures (a wrong host stays wrong), other 4xx (the request is wrong),
 * malformed streams, empty answers (a server that answers nothing answers nothing again), `other`, and `aborted`
 * (the run is stopping).
 */
export function isRetryable(error: RequestError): boolean {
  switch (error.kind) {
    case 'connect_refused':
    case 'connect_reset':
    case 'timeout_ttft':
    case 'timeout_idle':
    case 'timeout_total':
    case 'truncated_stream':
      return true;
    case 'http_status':
      return error.status !== undefined && RETRYABLE_STATUSES.has(error.status);
    default:
      return false;
  }
}

/**
 * Delay (ms) before retry number `attempt` (1-based): exponential backoff with full jitter, a uniform draw in
 * [0, min(30 s, 500 ms * 2^(attempt-1))). A server's `Retry-After` (ms), when given, is a floor and is honoured even
 * above the 30 s cap: the caller's run deadline bounds the wait. `random` returns a number in [0, 1).
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, random: () => number): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 2^6 * 500 ms already exceeds the cap; clamping the exponent keeps huge attempts finite.
  const ceilingMs = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.min(exponent, 16));
  const jitteredMs = random() * ceilingMs;
  return retryAfterMs !== undefined && retryAfterMs > jitteredMs ? retryAfterMs : jitteredMs;
}
