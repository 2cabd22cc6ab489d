import type { ActiveConversation } from '../active-conversation.js';
import type { TurnOutcome } from '../turn.js';
import type { WorkPool } from '../work-pool.js';

/**
 * Settles a conversation with the pool after a step (turn.ts's takeTurn): a failed or finished one leaves it. True
 * when the conversation has more turns to send. (After `budget_spent` nothing was sent and it stays as it was.)
 */
export function settle(pool: WorkPool, conversation: ActiveConversation, outcome: TurnOutcome): boolean {
  if (outcome === 'failed') pool.fail(conversation);
  else if (outcome === 'done') pool.complete(conversation);
  return outcome === 'more';
}
