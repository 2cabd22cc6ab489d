/** How the dataset's conversations ended. They always add up to the dataset's size: none is silently dropped. */
export interface ConversationCounts {
  total: number;
  /** Every turn answered. */
  completed: number;
  /** Ended by a failed request (after retries): its later turns were not sent. */
  failed: number;
  /**
   * Ended because a request found the --max-queue full (k6's dropped_iterations): that request and the conversation's
   * later turns were not sent. Each drop ends one conversation, so this is also the run's dropped requests.
   */
  dropped: number;
  /** Started but not finished when the run stopped (early stop, -n, --duration, a signal). */
  unfinished: number;
  /** Never started. */
  not_started: number;
}

/**
 * The counts of a run made of parts (worker threads, shards): each count summed, and not_started whatever the others
 * leave of the total, so that they still add up. Null when no part has counts (e.g. only unfinished shards).
 */
export function sumConversationCounts(parts: Iterable<Partial<ConversationCounts>>): ConversationCounts | null {
  const sum: ConversationCounts = { total: 0, completed: 0, failed: 0, dropped: 0, unfinished: 0, not_started: 0 };
  let any = false;
  for (const part of parts) {
    any = true;
    sum.total += part.total ?? 0;
    sum.completed += part.completed ?? 0;
    sum.failed += part.failed ?? 0;
    sum.dropped += part.dropped ?? 0;
    sum.unfinished += part.unfinished ?? 0;
  }
  sum.not_started = sum.total - sum.completed - sum.failed - sum.dropped - sum.unfinished;
  return any ? sum : null;
}
