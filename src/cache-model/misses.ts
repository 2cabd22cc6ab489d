/*
 * Why the server cached less of a prompt than the expected-cache model said it could (issue #30): each request's
 * missed tokens, max(0, expected - cached), go to one cause, read from where the server's hit stopped and what the
 * model knew at that point. The causes, in the order they are tried:
 * - block_rounding: the server caches in coarser units than the model (its cached counts share a granularity G
 *   larger than the model's block, e.g. SGLang pages or a larger vLLM block), and expected rounded down to G is
 *   what it served.
 * - routing: a router sent the request to a replica whose own cache did not hold the prefix (issue #31): the
 *   per-replica model's hit, in the cache of the replica its response header named, is below the one ideal cache's,
 *   and the server served no more than that replica could.
 * - reasoning_not_sent_back, history_resent: the hit stopped inside this conversation's previous answer. The server
 *   cached the answer's tokens as it generated them; the history sends the answer back as text, which the template
 *   renders and the tokenizer encodes again. Where the two differ the prefix ends. With reasoning in that answer
 *   (streamed apart, or `<think>` inside the content) the template dropped it; otherwise the generated ids differ
 *   from the text's encoding, or the template renders the earlier turn differently.
 * - slot_choice: llama.cpp's slots (llamacpp-slots.ts): the slot the server picked held less of the prompt than the
 *   model's one ideal cache, and the server restores from its prompt cache only when that slot would keep under half
 *   its tokens; it served no more than its slot held.
 * - concurrency: the model's hit includes blocks that appeared after this request was sent (another request's
 *   prefill in the same step, or another slot still busy with it), and the server's hit stopped where the index
 *   stood at the send.
 * - capacity_eviction: a cache a quarter smaller than the modelled capacity would also have missed them: the blocks
 *   were next in line for eviction, and the server, whose blocks also hold what the model does not track (running
 *   requests' output, preempted work), evicted them first.
 * - unexplained: none of the above.
 */

import type { MissCause } from '../metrics/prefix-cache-tally.js';

/** What the model knew of one request when its server-reported cached tokens came. Tokens throughout. */
export interface MissFacts {
  cached: number;
  expected: number;
  /** The model's block size. */
  blockSize: number;
  /** The granularity the server's cached counts share so far (their greatest common divisor; 1 when unknown). */
  serverGranularity: number;
  /**
   * The model's hit as its index stood when the request was sent (equal to expected when it looks up at the send, or,
   * waiting for llama.cpp's slot, when a slot takes it).
   */
  atSend: number;
  /** The hit in a cache a quarter smaller; undefined without a modelled capacity. */
  smallerCache: number | undefined;
  /** The hit in the cache of the replica the request went to (replicas behind a router); undefined when unknown. */
  perReplica: number | undefined;
  /** This conversation's previous request: its prompt's length, its answer's (as sent back), and whether it reasoned. */
  previous: { promptLength: number; answerLength: number; reasoning: boolean } | undefined;
  /** The hit llama.cpp's slots would give (llamacpp-slots.ts); undefined when not followed or not known. */
  slotHit?: number;
}

/** The cause of a request's missed tokens (only called when expected > cached). */
export function missCause(f: MissFacts): MissCause {
  const g = f.serverGranularity;
  if (g > f.blockSize && Math.floor(f.expected / g) * g <= f.cached) return 'block_rounding';
  const unit = Math.max(f.blockSize, g);
  if (f.perReplica !== undefined && f.perReplica < f.expected && f.cached <= f.perReplica + unit) return 'routing';
  const p = f.previous;
  if (p !== undefined && p.answerLength > 0 && f.cached >= p.promptLength - unit && f.cached < p.promptLength + p.answerLength && f.expected > p.promptLength) {
    return p.reasoning ? 'reasoning_not_sent_back' : 'history_resent';
  }
  if (f.slotHit !== undefined && f.slotHit < f.expected && f.cached <= f.slotHit) return 'slot_choice';
  if (f.atSend < f.expected && f.cached <= f.atSend) return 'concurrency';
  if (f.smallerCache !== undefined && f.smallerCache < f.expected) return 'capacity_eviction';
  return 'unexplained';
}

/**
 * Tokens the server served from cache beyond anything this run had sent or received before the request (the
 * warm-start tokens of a cache the run did not empty): the excess over `seen`, counted when it is more than one
 * unit of granularity, since up to a block of it is rounding between the model's blocks and the server's.
 */
export function warmStartTokens(cached: number, seen: number, unit: number): number {
  const excess = cached - seen;
  return excess >= unit ? excess : 0;
}

/** Greatest common divisor, for the server's granularity (gcd(0, n) = n). */
export function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
