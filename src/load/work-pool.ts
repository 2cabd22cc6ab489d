import type { Conversation } from '../conversation/types.js';
import type { ActiveConversation } from './active-conversation.js';
import type { RequestBudget } from './partition.js';
import type { ConversationCounts, ConversationOutcome } from './types.js';

/**
 * The shared source of work for all clients: conversations in dataset order, and the exact request budget (-n).
 * Clients take from it as they need, so no remainder is lost to integer splits.
 * It also tracks how each conversation ended, so none is silently dropped.
 */
export class WorkPool {
  readonly #queue: ActiveConversation[];
  #head = 0;
  readonly #budget: RequestBudget;
  readonly #active = new Set<ActiveConversation>();
  readonly #finished: Conversation[] = [];
  #completed = 0;
  #failed = 0;
  #dropped = 0;
  readonly #total: number;

  readonly #keepFinished: boolean;
  readonly #onEnd: ((outcome: ConversationOutcome) => void) | undefined;

  /**
   * `budget` may be shared with other parts of the run (worker threads): -n stays exact across all of them.
   * Finished conversations (with their answers) are kept only when `keepFinished` (for -o), so memory stays flat.
   * `onEnd` hears each conversation's end as it happens (a worker thread reports them, so that its counts outlive it).
   */
  constructor(conversations: readonly ActiveConversation[], total: number, budget: RequestBudget, options: { keepFinished?: boolean; onEnd?: (outcome: ConversationOutcome) => void } = {}) {
    this.#queue = conversations.slice();
    this.#total = total;
    this.#budget = budget;
    this.#keepFinished = options.keepFinished ?? true;
    this.#onEnd = options.onEnd;
  }

  /** The next conversation to start, or undefined when none is left. */
  take(): ActiveConversation | undefined {
    const next = this.#queue[this.#head];
    if (next === undefined) return undefined;
    this.#queue[this.#head] = undefined as unknown as ActiveConversation; // let it be collected when done
    this.#head += 1;
    this.#active.add(next);
    return next;
  }

  get hasConversations(): boolean {
    return this.#head < this.#queue.length;
  }

  /** Takes one request from the -n budget; false when the budget is spent. */
  takeRequest(): boolean {
    return this.#budget.take();
  }

  /** Requests taken from the -n budget so far (by every part sharing it). */
  get requestsTaken(): number {
    return this.#budget.taken;
  }

  get budgetSpent(): boolean {
    return this.#budget.spent;
  }

  /** A conversation answered its last turn. */
  complete(conversation: ActiveConversation): void {
    if (this.#active.delete(conversation)) this.#complete(conversation);
  }

  /** A conversation ended on a failed request. */
  fail(conversation: ActiveConversation): void {
    if (this.#active.delete(conversation)) this.#fail();
  }

  /** A conversation ended because its next request found the --max-queue full: dropped, not sent. */
  drop(conversation: ActiveConversation): void {
    if (!this.#active.delete(conversation)) return;
    this.#dropped += 1;
    this.#onEnd?.('dropped');
  }

  /** Conversations that finished during warmup count as completed up front. */
  completedInWarmup(conversation: ActiveConversation): void {
    this.#complete(conversation);
  }

  failedInWarmup(): void {
    this.#fail();
  }

  #complete(conversation: ActiveConversation): void {
    this.#completed += 1;
    if (this.#keepFinished) this.#finished.push(conversation.replayed());
    this.#onEnd?.('completed');
  }

  #fail(): void {
    this.#failed += 1;
    this.#onEnd?.('failed');
  }

  get finishedConversations(): Conversation[] {
    return this.#finished;
  }

  counts(): ConversationCounts {
    let unfinished = 0;
    for (const conversation of this.#active) if (conversation.started) unfinished += 1;
    return {
      total: this.#total,
      completed: this.#completed,
      failed: this.#failed,
      dropped: this.#dropped,
      unfinished,
      not_started: this.#total - this.#completed - this.#failed - this.#dropped - unfinished,
    };
  }
}
