import type { DistributionSpec } from '../options/values/distribution-spec.js';
import { distributionOf } from '../synth/distributions.js';
import type { Rng } from '../util/rng.js';
import type { ActiveConversation } from './active-conversation.js';

/** Think time in ms before a conversation's next turn. */
export type ThinkTime = (conversation: ActiveConversation, turn: number, rng: Rng) => number;

/**
 * The open loop's think time before a conversation's next turn, in ms: the `--think-time` distribution (seconds)
 * when given, else the dataset's per-turn `think_time_sec`, else none.
 */
export function thinkTimeOf(thinkTimeSec: DistributionSpec | undefined): ThinkTime {
  if (thinkTimeSec !== undefined) {
    const distribution = distributionOf(thinkTimeSec);
    return (_conversation, _turn, rng) => Math.max(0, distribution.sample(rng)) * 1000;
  }
  return (conversation, turn) => (conversation.conversation.turns?.[turn - 1]?.thinkTimeSec ?? 0) * 1000;
}
