import type { Conversation } from '../conversation/types.js';
import type { ContentPart } from '../tokenizer/types.js';
import type { Rng } from '../util/rng.js';
import { sampleMany, type Distribution } from './distributions.js';

/** Which user messages get media parts, and how many each: what the `images` and `audio` generator keys share. */
export interface MediaPlacement {
  /** Parts per user message that gets them (rounded, at least 0). */
  count: Distribution;
  /** `first`: only each conversation's first user message; `all`: every user message. */
  turns: 'first' | 'all';
}

/**
 * Puts `makePart()` parts in the user messages `placement.turns` names, `placement.count` of them each, where `place`
 * says among the message's content parts. Draws from `rng` in message order (the count, then each part's own draws),
 * so a seed gives the same parts.
 */
export function addMediaParts(
  conversations: Conversation[],
  placement: MediaPlacement,
  rng: Rng,
  makePart: () => ContentPart,
  place: (content: ContentPart[], parts: ContentPart[]) => ContentPart[],
): void {
  for (const conversation of conversations) {
    let userTurn = 0;
    for (const message of conversation.messages) {
      if (message.role !== 'user') continue;
      if (placement.turns === 'first' && userTurn > 0) break;
      userTurn += 1;
      const count = Math.max(0, Math.round(sampleMany(placement.count, rng, 1)[0] ?? 0));
      if (count === 0) continue;
      const parts: ContentPart[] = [];
      for (let i = 0; i < count; i++) parts.push(makePart());
      const content: ContentPart[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      message.content = place(content, parts);
    }
  }
}
