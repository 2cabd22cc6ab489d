import { parseDistributionFlag } from '../synth/distributions.js';
import type { RunOptions } from '../options/run-options.js';
import type { ThinkTime } from './load/from-options.js';

/**
 * The open loop's think time before a conversation's next turn, in ms: `--think-time DIST` (seconds) when given,
 * else the dataset's per-turn `think_time_sec`, else none. Throws a ConfigError for a bad distribution.
 */
export function thinkTimeFromOptions(options: RunOptions): ThinkTime {
  if (options.thinkTime !== undefined) {
    const distribution = parseDistributionFlag(options.thinkTime, '--think-time');
    return (_conversation, _turn, rng) => Math.max(0, distribution.sample(rng)) * 1000;
  }
  return (conversation, turn) => (conversation.conversation.turns?.[turn - 1]?.thinkTimeSec ?? 0) * 1000;
}
