import type { RequestRecord } from './record.js';
import { describe, type Stats } from './stats.js';

/** One conversation's outcome in the measured phase: its turns, duration and cumulative tokens. */
export interface ConversationSummary {
  conversation_id: string;
  turns_completed: number;
  turns_failed: number;
  /** First send to last end of its measured requests, ms. */
  duration_ms: number;
  /** Sums over its completed requests, tokens. */
  cumulative_input_tokens: number;
  cumulative_output_tokens: number;
  cumulative_cached_tokens: number;
}

/** Statistics across conversations. */
export interface ConversationStats {
  conversations: number;
  duration_ms: Stats | null;
  turns_completed: Stats | null;
  /** Input + output tokens per conversation. */
  cumulative_tokens: Stats | null;
}

/** One summary per conversation that has a measured (non-warmup) request, in first-seen order. */
export function summarizePerConversation(records: readonly RequestRecord[]): ConversationSummary[] {
  const tally = new ConversationTally();
  for (const r of records) tally.add(r);
  return tally.summaries();
}

/**
 * Per-conversation summaries built one record at a time (exact; memory grows with the conversations, not the records),
 * for summarizePerConversation and for analyses that stream their records.
 */
export class ConversationTally {
  readonly #byId = new Map<string, ConversationSummary & { firstMs: number; lastMs: number }>();

  /** Adds one record (warmup records are ignored). */
  add(r: RequestRecord): void {
    if (r.warmup) return;
    let c = this.#byId.get(r.conversation_id);
    if (c === undefined) {
      c = {
        conversation_id: r.conversation_id,
        turns_completed: 0,
        turns_failed: 0,
        duration_ms: 0,
        cumulative_input_tokens: 0,
        cumulative_output_tokens: 0,
        cumulative_cached_tokens: 0,
        firstMs: r.sent_at_ms,
        lastMs: r.done_at_ms,
      };
      this.#byId.set(r.conversation_id, c);
    }
    c.firstMs = Math.min(c.firstMs, r.sent_at_ms);
    c.lastMs = Math.max(c.lastMs, r.done_at_ms);
    if (r.status !== 'ok') {
      c.turns_failed += 1;
      return;
    }
    c.turns_completed += 1;
    c.cumulative_input_tokens += r.input_num_tokens;
    c.cumulative_output_tokens += r.output_num_tokens;
    c.cumulative_cached_tokens += r.cached_tokens ?? 0;
  }

  /** One summary per conversation seen, in first-seen order. */
  summaries(): ConversationSummary[] {
    return [...this.#byId.values()].map(({ firstMs, lastMs, ...c }) => ({ ...c, duration_ms: Math.round((lastMs - firstMs) * 1000) / 1000 }));
  }
}

/** Duration, turns and tokens across conversations. */
export function conversationStats(conversations: readonly ConversationSummary[]): ConversationStats {
  return {
    conversations: conversations.length,
    duration_ms: describe(conversations.map((c) => c.duration_ms)),
    turns_completed: describe(conversations.map((c) => c.turns_completed)),
    cumulative_tokens: describe(conversations.map((c) => c.cumulative_input_tokens + c.cumulative_output_tokens)),
  };
}
