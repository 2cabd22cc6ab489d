import type { CacheIndex, IndexPrompt } from './cache-index.js';
import type { ConversationState } from './conversation-state.js';
import type { CacheAccount, ExpectedCacheTicket } from './expected-cache-types.js';
import type { MissFacts } from './misses.js';
import type { Operation } from './operation-queue.js';

/*
 * Where ExpectedCache's index events go (issue #31): to an index in its own thread (LocalIndexDriver), or by message
 * to the one index of the run in the coordinator thread (index-transport.ts). Each event is an Operation that
 * ExpectedCache runs in its queue, in call order, once the ticket's prompt ids and hashes are known; `state` is the
 * ticket's conversation's (its block hashes), undefined when the prompt's ids are unknown or stale.
 */

/** The index events of a request, in order: sent, prefilled (or none), ended; and its account. */
export interface IndexDriver {
  /** The request was sent at `atMs` (performance.now()): the index's reading at the send. */
  sentSteps(ticket: ExpectedCacheTicket, state: ConversationState, atMs: number): Operation;
  /** Its first token came at `atMs`: its lookup (and the publications due). */
  prefilledSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, atMs: number): Operation;
  /** A router's response head named the replica that serves it (each attempt's): that replica's cache is read too. */
  routedSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, replica: string): Operation;
  /** It ended at `nowMs`: its blocks up to `totalBlocks` of its conversation's hashes are cached (none when `state` is undefined). */
  endSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, totalBlocks: number, nowMs: number): Operation;
  /**
   * Resolves when the ticket's figures are final, once its lookup's operation has run (at once in this thread; when
   * the index's answer has come, for one in another thread); undefined when they already are.
   */
  answered(ticket: ExpectedCacheTicket): Promise<void> | undefined;
  /** The server's cached tokens against the ticket's final figures. */
  account(ticket: ExpectedCacheTicket, cached: number, previous: MissFacts['previous']): CacheAccount;
  /** Every distinct block the index holds, its evictions and the replicas it has a cache of (0 when the index is in another thread). */
  readonly cachedBlocks: number;
  readonly evictions: number;
  readonly replicas: number;
  /** Stops the driver (its waits end). */
  close(): void;
}

/** The index in this thread: each event runs at once, in the caller's queue. */
export class LocalIndexDriver implements IndexDriver {
  readonly #index: CacheIndex;

  constructor(index: CacheIndex) {
    this.#index = index;
  }

  /** The conversation's prompt as the index reads it (its state is also the index's note of it); none when unknown. */
  static #prompt(state: ConversationState | undefined): IndexPrompt | undefined {
    return state === undefined ? undefined : { keys: state.chain.hashes, known: state.known, note: state };
  }

  get cachedBlocks(): number {
    return this.#index.cachedBlocks;
  }

  get evictions(): number {
    return this.#index.evictions;
  }

  get replicas(): number {
    return this.#index.replicas;
  }

  sentSteps(ticket: ExpectedCacheTicket, state: ConversationState, atMs: number): Operation {
    return this.#index.sentSteps(ticket, LocalIndexDriver.#prompt(state)!, atMs);
  }

  prefilledSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, atMs: number): Operation {
    return this.#index.prefilledSteps(ticket, LocalIndexDriver.#prompt(state), atMs);
  }

  routedSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, replica: string): Operation {
    return this.#index.routedSteps(ticket, LocalIndexDriver.#prompt(state), replica);
  }

  endSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, totalBlocks: number, nowMs: number): Operation {
    return this.#index.endSteps(ticket, state?.chain.hashes, totalBlocks, nowMs, state);
  }

  answered(): undefined {
    return undefined;
  }

  account(ticket: ExpectedCacheTicket, cached: number, previous: MissFacts['previous']): CacheAccount {
    return this.#index.account(ticket, cached, previous);
  }

  close(): void {}
}
