import type { Conversation } from './types.js';

/**
 * The most requests one session can have in flight at once: 1 without sub-agents; at a fork point, the sum of its
 * children's own fan-outs (they run concurrently, and each may fork again). The largest over the dataset.
 */
export function forkFanOut(conversations: readonly Conversation[]): number {
  let max = 1;
  for (const c of conversations) max = Math.max(max, fanOutOf(c));
  return max;
}

function fanOutOf(conversation: Conversation): number {
  if (conversation.forks === undefined) return 1;
  const byPoint = new Map<number, number>();
  for (const child of conversation.forks) byPoint.set(child.parent!.at, (byPoint.get(child.parent!.at) ?? 0) + fanOutOf(child));
  return Math.max(1, ...byPoint.values());
}

/** Every conversation with its sub-agents (and theirs), parents first. */
export function* withForks(conversations: readonly Conversation[]): Generator<Conversation> {
  for (const c of conversations) {
    yield c;
    if (c.forks !== undefined) yield* withForks(c.forks);
  }
}
