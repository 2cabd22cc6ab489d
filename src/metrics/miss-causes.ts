/** A reason the server cached less than expected (cache-model/misses.ts says how each is told). */
export type MissCause = 'block_rounding' | 'capacity_eviction' | 'concurrency' | 'history_resent' | 'reasoning_not_sent_back' | 'routing' | 'slot_choice' | 'unexplained';

/** Every cause, in the order results.json and the reports list them. */
export const MISS_CAUSES: readonly MissCause[] = ['block_rounding', 'capacity_eviction', 'concurrency', 'history_resent', 'reasoning_not_sent_back', 'routing', 'slot_choice', 'unexplained'];
