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

/** One conversation of a ConversationTally as toJSON() writes it: its summary so far and its first send and last end. */
export type SerializedConversation = Omit<ConversationSummary, 'duration_ms'> & { first_ms: number; last_ms: number };

/**
 * Per-conversation summaries built one record at a time (exact; memory grows with the conversations, not the records).
 * Tallies merge exactly: a conversation seen by both adds up, one seen by `other` only comes after this one's.
 */
export class ConversationTally {
  readonly #byId = new Map<string, SerializedConversation>();

  /** Conversations seen. */
  get size(): number {
    return this.#byId.size;
  }

  /** Adds one record (warmup records are ignored). */
  add(r: RequestRecord): void {
    if (r.warmup) return;
    let c = this.#byId.get(r.conversation_id);
    if (c === undefined) {
      c = {
        conversation_id: r.conversation_id,
        turns_completed: 0,
        turns_failed: 0,
        cumulative_input_tokens: 0,
        cumulative_output_tokens: 0,
        cumulative_cached_tokens: 0,
        first_ms: r.sent_at_ms,
        last_ms: r.done_at_ms,
      };
      this.#byId.set(r.conversation_id, c);
    }
    c.first_ms = Math.min(c.first_ms, r.sent_at_ms);
    c.last_ms = Math.max(c.last_ms, r.done_at_ms);
    if (r.status !== 'ok') {
      c.turns_failed += 1;
      return;
    }
    c.turns_completed += 1;
    c.cumulative_input_tokens += r.input_num_tokens;
    c.cumulative_output_tokens += r.output_num_tokens;
    c.cumulative_cached_tokens += r.cached_tokens ?? 0;
  }

  /** Adds other's conversations to these. */
  merge(other: ConversationTally): this {
    for (const o of other.#byId.values()) {
      const c = this.#byId.get(o.conversation_id);
      if (c === undefined) {
        this.#byId.set(o.conversation_id, { ...o });
        continue;
      }
      c.first_ms = Math.min(c.first_ms, o.first_ms);
      c.last_ms = Math.max(c.last_ms, o.last_ms);
      c.turns_completed += o.turns_completed;
      c.turns_failed += o.turns_failed;
      c.cumulative_input_tokens += o.cumulative_input_tokens;
      c.cumulative_output_tokens += o.cumulative_output_tokens;
      c.cumulative_cached_tokens += o.cumulative_cached_tokens;
    }
    return this;
  }

  /** One summary per conversation seen, in first-seen order. */
  summaries(): ConversationSummary[] {
    return [...this.#byId.values()].map((c) => ({
      conversation_id: c.conversation_id,
      turns_completed: c.turns_completed,
      turns_failed: c.turns_failed,
      duration_ms: Math.round((c.last_ms - c.first_ms) * 1000) / 1000,
      cumulative_input_tokens: c.cumulative_input_tokens,
      cumulative_output_tokens: c.cumulative_output_tokens,
      cumulative_cached_tokens: c.cumulative_cached_tokens,
    }));
  }

  /** The tally as plain data (fromJSON() restores it). */
  toJSON(): SerializedConversation[] {
    return [...this.#byId.values()].map((c) => ({ ...c }));
  }

  /** Restores toJSON()'s output. */
  static fromJSON(value: readonly SerializedConversation[]): ConversationTally {
    const out = new ConversationTally();
    for (const c of value) out.#byId.set(c.conversation_id, { ...c });
    return out;
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
