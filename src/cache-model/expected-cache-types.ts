import type { BlockLease, BlockPool } from '../prefix-cache/block-pool.js';
import type { MissCause } from '../metrics/prefix-cache-tally.js';
import type { SlotTicket } from './llamacpp-slots.js';

/*
 * The expected-cache model's data as its callers see it (expected-cache.ts): a request's ticket and figures, the
 * answer it caches, and what a server's cached tokens say against it.
 */

/** The model's figures for one request, in tokens. */
export interface ExpectedHit {
  /** With the capacity model when there is one, else the infinite one. */
  expected: number;
  /** With no eviction. */
  infinite: number;
  /**
   * In the cache of the replica the request went to (one cache per replica, each as the main figure's: with the
   * capacity when there is one), once `routed` named it and the lookup ran; undefined otherwise (docs/METRICS.md).
   */
  perReplica?: number;
}

/** One request as an index holds it (cache-index.ts), between its send and its end: its figures and its blocks. */
export interface IndexTicket extends SlotTicket {
  readonly hit: ExpectedHit;
  /** The prompt's length in the model's ids (set once they are known). */
  promptLength: number;
  /** Blocks of the prompt and the output budget. */
  totalBlocks: number;
  /** The model's hit, in tokens, as the index stood at the send (see misses.ts, concurrency). */
  atSend: number;
  /**
   * The hit in everything the run had sent or received before the send, at once and with no eviction (warm start);
   * brought up to its first token then (CacheIndex.prefilledSteps).
   */
  seen: number;
  /** Its prompt's blocks the infinite index did not hold at the send, in flight until its end: their in-flight ids. */
  inFlight: number[];
  /** The hit in a cache a quarter smaller than the modelled capacity (capacity_eviction); undefined without one. */
  smaller: number | undefined;
  /**
   * With a capacity: its blocks' entry ids in the infinite index, resolved so far (the leading blocks found there), the
   * keys of the capacity model's pools; its conversation's array from its send on (cache-index.ts). Empty without one.
   */
  ids: number[];
  /** Its blocks in each pool; `byId`: the pool's keys are `ids` rather than the block hashes. */
  readonly leases: Array<{ pool: BlockPool; lease: BlockLease; byId: boolean }>;
  /** The replica that served it (a router's response header: CacheIndex.routedSteps), when known. */
  replica: string | undefined;
  /** Whether its lookup has run: a replica named after it is looked up on its own (routedSteps). */
  lookedUp: boolean;
}

/** One request between its send and its end, as ExpectedCache follows it: its conversation, ids and lookup. */
export interface ExpectedCacheTicket extends IndexTicket {
  readonly conversation: object;
  /** Resolves when the prompt's ids are known (the server's, asked after the send); rejects when they cannot be. */
  readonly ready: Promise<void>;
  /** True while `ready` has not settled (the server's ids on their way): operations on the ticket wait for it. */
  pending: boolean;
  /** False when the prompt's ids could not be had (a failed tokenize call), or its figures never came: no figure. */
  known: boolean;
  /** Whether its lookup was asked for (by `prefilled`, or by `end` when no first token came). */
  lookupAsked: boolean;
  /** Resolves when its lookup has run, when it had to wait (see the comment at the top). */
  lookup: Promise<void> | undefined;
}

/**
 * The answer of an ended request, as the cache counts it: its ids, or its text (encoded by the model's tokenizer) with
 * why it ended. The last token a server samples is never decoded, so its KV is never computed: an answer cut at its
 * length leaves its last token out of the cache, one that stopped on its end-of-sequence token (not in the text) keeps
 * all of the text (llama.cpp and vLLM alike; checked against a live llama-server).
 */
export type CachedAnswer = ArrayLike<number> | { text: string; reasoning: boolean; finishReason?: string | null };

/** What a request's server-reported cached tokens say against the model: warm-start tokens, and its miss's cause. */
export interface CacheAccount {
  warmStartTokens: number;
  missedTokens: number;
  missCause: MissCause | null;
}
