import { setMaxListeners } from 'node:events';

/** Why a run stopped. */
export type StopReason =
  | 'completed' // every conversation ran to its end (or --no-early-stop drained them all)
  | 'out_of_work' // early stop: the first client ran out of conversations
  | 'max_requests' // -n was reached
  | 'duration' // --duration elapsed (soft stop)
  | 'benchmark_timeout' // --benchmark-timeout-sec elapsed (hard stop)
  | 'interrupted' // SIGINT/SIGTERM or the caller's AbortSignal
  | 'output_error'; // a record could not be written (ENOSPC, EIO): no new requests, in-flight ones finish

/**
 * The run's two deadlines, as AbortSignals: `stopping` fires when no new turn may start; `abort` fires when
 * in-flight requests must be aborted. The first reason given wins and is what the run reports.
 */
export class StopController {
  readonly #soft = new AbortController();
  readonly #hard = new AbortController();
  #reason: StopReason | undefined;

  constructor() {
    // Every in-flight request and pause listens on these: thousands of listeners are expected, not a leak.
    setMaxListeners(0, this.#soft.signal, this.#hard.signal);
  }

  /** Fires when no new turn may start. */
  get stopping(): AbortSignal {
    return this.#soft.signal;
  }

  /** Fires when in-flight requests must be aborted. */
  get abort(): AbortSignal {
    return this.#hard.signal;
  }

  get reason(): StopReason | undefined {
    return this.#reason;
  }

  /** Soft stop: start no new turns; in-flight requests finish (bounded by their own timeouts). */
  stop(reason: StopReason): void {
    this.#reason ??= reason;
    if (!this.#soft.signal.aborted) this.#soft.abort(reason);
  }

  /**
   * Follows a caller's signal as SIGINT does: when it fires (or if it already has), a soft stop ('interrupted'),
   * then in-flight requests are aborted after `graceMs`. Returns a function that stops following and clears the
   * grace timer.
   */
  followSignal(signal: AbortSignal | undefined, graceMs: number): () => void {
    let grace: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      this.stop('interrupted');
      grace = setTimeout(() => this.abortInFlight('interrupted'), graceMs);
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    return () => {
      signal?.removeEventListener('abort', onAbort);
      clearTimeout(grace);
    };
  }

  /**
   * A soft stop when `signal` fires, with its reason (a StopReason) as the run's: how the caller stops a run for a
   * reason of its own, e.g. 'output_error'. Returns a function that stops following.
   */
  followStopSignal(signal: AbortSignal | undefined): () => void {
    const onAbort = (): void => this.stop((typeof signal?.reason === 'string' ? signal.reason : 'interrupted') as StopReason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    return () => signal?.removeEventListener('abort', onAbort);
  }

  /** Hard stop: also abort what is in flight. */
  abortInFlight(reason: StopReason): void {
    this.stop(reason);
    if (!this.#hard.signal.aborted) this.#hard.abort(reason);
  }
}

/** "the run stopped (REASON)": why a request or retry was aborted, from the hard-stop signal's reason. */
export function stopMessage(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? `the run stopped (${signal.reason})` : 'the run stopped';
}
