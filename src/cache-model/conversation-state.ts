import type { BlockHashChain } from '../prefix-cache/block-hash.js';
import type { PromptIds } from './prompt-ids.js';

/*
 * One conversation as the expected-cache model follows it (expected-cache.ts): its prompt ids, their block hashes, and
 * the id arrays' helpers its turns are built with.
 */

/** One conversation's state: its prompt ids and their block hashes (a partial tail block is rehashed when it fills). */
export interface ConversationState {
  /** The local tokenizer's incremental ids; undefined with the server's ids. */
  ids: PromptIds | undefined;
  chain: BlockHashChain;
  /** The last prompt's ids (a view) and length: the answer's blocks continue them. */
  last: Uint32Array;
  lastLength: number;
  /** Leading blocks of the chain registered in the infinite index (they stay there): not looked up again. */
  registered: number;
  /** The same, bounded by what the latest prompt left unchanged. */
  known: number;
  /**
   * Leading blocks of the chain unchanged since an index in another thread was last sent them (index-transport.ts):
   * it is sent the rest only, so each turn sends its new hashes, not the history's.
   */
  changedFrom: number;
  /**
   * The replica its last request with a per-replica figure went to: with no eviction, that replica's cache holds the
   * `known` blocks too, so a request routed there again skips them as the infinite index does (replica-caches.ts).
   */
  replica?: string;
  /** With a capacity: its leading blocks' entry ids in the infinite index (cache-index.ts, ConversationNote). */
  entryIds?: number[];
  /** The previous request's prompt length, answer length (its ids as sent back) and whether it reasoned. */
  previous: { promptLength: number; answerLength: number; reasoning: boolean } | undefined;
}

/** Writes `head` then `tail` into `out` (their lengths long) and returns it. */
export function joinedIds(out: Uint32Array, head: Uint32Array, tail: ArrayLike<number>): Uint32Array {
  out.set(head);
  out.set(tail, head.length);
  return out;
}

/** Length of the common prefix of two id arrays (the first `n` of `a`, the first `m` of `b`). */
export function commonIds(a: Uint32Array, n: number, b: Uint32Array, m: number): number {
  const end = Math.min(n, m);
  let i = 0;
  while (i < end && a[i] === b[i]) i++;
  return i;
}
