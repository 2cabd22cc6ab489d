import type { MessagePort } from 'node:worker_threads';
import { accountOf, noteCached, type ServerGranularity } from './cache-index.js';
import { SlotLayoutChoice } from './llamacpp-slots.js';
import type { ConversationState } from './conversation-state.js';
import type { CacheAccount, ExpectedCacheTicket } from './expected-cache-types.js';
import type { IndexDriver } from './index-driver.js';
import type { MissFacts } from './misses.js';
import type { Operation } from './operation-queue.js';
import type { SharedFrom } from '../server-engine/cache-semantics.js';

/*
 * One expected-cache index for a run of several worker threads (issue #31): each worker's ExpectedCache renders,
 * encodes and hashes its own conversations' prompts, and sends their index events here, by message, to the one
 * index the coordinator thread owns (index-owner.ts), which runs them in the order they arrive and answers each
 * request's figures once its lookup has run.
 * - Volume: a request sends only what is new in its turn (its conversation's block hashes past those already sent),
 *   in three events (sent, prefilled, ended), batched per turn of the event loop with every other request's.
 * - Clock: times go as epoch ms (performance.timeOrigin + performance.now()): each thread's performance.now() counts
 *   from its own start.
 * - Waiting: a request's record waits for its figures (settled) at most ANSWER_TIMEOUT_MS, and not at all once the
 *   driver is closed or the owner has gone; a request whose figures did not come has none (unmodelled).
 */

/** The longest a request's record waits for the owner's answer, in ms (it comes within a turn of the loop or two). */
export const ANSWER_TIMEOUT_MS = 10_000;

/** An index event of one request (`t`: its ticket's number in its worker), or of the worker's conversations. */
export type IndexEvent =
  /** Sent at `at`: the conversation `c`'s hashes from `from` on (the rest unchanged), and what the prompt is. */
  | { e: 'sent'; t: number; c: number; from: number; hashes: number[]; known: number; promptLength: number; totalBlocks: number; at: number; answer: boolean }
  /**
   * First token at `at`; `lookup`: its prompt is known, so it is read (its lookup, or with sharedFrom 'end' what the
   * run had sent by now) and its figures come back; else only the publications due run.
   */
  | { e: 'prefilled'; t: number; at: number; lookup: boolean }
  /**
   * A router's response head named the replica that serves it (each attempt's); `answer`: its lookup was sent
   * already, so the replica's own lookup runs now and its figure comes back (else it comes with the lookup's).
   */
  | { e: 'routed'; t: number; replica: string; answer: boolean }
  /** Ended at `at`: the conversation's hashes from `from` on, and its blocks up to totalBlocks (c -1: none known). */
  | { e: 'end'; t: number; c: number; from: number; hashes: number[]; totalBlocks: number; at: number }
  /** A request's server-reported cached tokens (the granularity's evidence). */
  | { e: 'cached'; n: number }
  /** The conversation `c` is gone: its hashes can be dropped. */
  | { e: 'forget'; c: number };

/**
 * The owner's answer for ticket `t`: [t, expected, infinite, atSend, seen, smaller (-1: none), granularity gcd,
 * samples, perReplica (-1: none), slotHit, slotHitUnified (llama.cpp's slots, -1: none), awaited (1: the answer to an
 * event the worker waits on, its send's or its first token's; 0: a request that waited for llama.cpp's slot got one,
 * at another's end: only its slot figures are read from it, and it ends no wait)].
 */
export type IndexAnswer = [number, number, number, number, number, number, number, number, number, number, number, 0 | 1];

/** A batch of events from a worker, and of answers back. */
export interface IndexEvents {
  events: IndexEvent[];
}
export interface IndexAnswers {
  answers: IndexAnswer[];
}

/** Epoch ms of a performance.now() reading of this thread: the clock every thread shares. */
export const epochMs = (nowMs: number): number => performance.timeOrigin + nowMs;

/** An event's operation here: it was posted, nothing more runs in this thread. */
function* posted(): Operation {}

interface AwaitedAnswer {
  ticket: ExpectedCacheTicket;
  /** Answers still to come: the lookup's, and a late replica lookup's (routed after the lookup was sent). */
  count: number;
  done: Promise<void>;
  resolve: () => void;
}

/** A worker's side: ExpectedCache's index events, sent to the owner; the owner's answers, given to the tickets. */
export class RemoteIndexDriver implements IndexDriver {
  readonly cachedBlocks = 0;
  readonly evictions = 0;
  readonly replicas = 0;
  readonly #port: MessagePort;
  readonly #sharedFrom: SharedFrom;
  readonly #blockSize: number;
  #batch: IndexEvent[] = [];
  #flushing = false;
  #nextTicket = 0;
  #nextConversation = 0;
  readonly #tickets = new WeakMap<ExpectedCacheTicket, number>();
  readonly #conversations = new WeakMap<object, number>();
  /** A conversation object collected: its hashes are dropped by the owner too. */
  readonly #gone = new FinalizationRegistry<number>((c) => this.#send({ e: 'forget', c }));
  readonly #awaited = new Map<number, AwaitedAnswer>();
  /** Tickets whose lookup was sent (a replica named after it is looked up on its own: routed). */
  readonly #lookedUp = new WeakSet<ExpectedCacheTicket>();
  /** The server's granularity as the owner last said, per ticket answered (account). */
  readonly #granularity = new WeakMap<ExpectedCacheTicket, ServerGranularity>();
  /** Tickets sent and not ended, when the owner may answer again (llama.cpp's slots, sharedFrom 'end'). */
  readonly #open = new Map<number, ExpectedCacheTicket>();
  readonly #layouts = new SlotLayoutChoice();
  #closed = false;
  /** Messages posted (the bench's count). */
  posted = 0;

  /** `port`: this worker's end of its channel to the owner; `config`: the run's model (the owner's is the same). */
  constructor(port: MessagePort, config: { blockSize: number; sharedFrom?: SharedFrom }) {
    this.#port = port;
    this.#sharedFrom = config.sharedFrom ?? 'prefill';
    this.#blockSize = config.blockSize;
    port.on('message', (message: IndexAnswers) => this.#onAnswers(message.answers));
    // The owner gone (its thread ended the run): nobody waits for it. The port keeps this thread alive while it waits
    // for answers; close() lets it go.
    port.on('close', () => this.close());
  }

  #ticketOf(ticket: ExpectedCacheTicket): number {
    let t = this.#tickets.get(ticket);
    if (t === undefined) this.#tickets.set(ticket, (t = this.#nextTicket++));
    return t;
  }

  #conversationOf(ticket: ExpectedCacheTicket): number {
    let c = this.#conversations.get(ticket.conversation);
    if (c === undefined) {
      this.#conversations.set(ticket.conversation, (c = this.#nextConversation++));
      this.#gone.register(ticket.conversation, c);
    }
    return c;
  }

  /** The conversation's hashes the owner does not have yet: from its first changed block on. */
  static #delta(state: ConversationState): { from: number; hashes: number[] } {
    const keys = state.chain.hashes;
    const from = Math.min(state.changedFrom, keys.length);
    state.changedFrom = keys.length;
    return { from, hashes: keys.slice(from) };
  }

  #send(event: IndexEvent): void {
    if (this.#closed) return;
    this.#batch.push(event);
    if (this.#flushing) return;
    this.#flushing = true;
    // Every event of this turn of the loop in one message.
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushing = false;
    if (this.#closed || this.#batch.length === 0) return;
    const message: IndexEvents = { events: this.#batch };
    this.#batch = [];
    this.posted++;
    this.#port.postMessage(message);
  }

  #await(ticket: ExpectedCacheTicket, t: number): void {
    const awaited = this.#awaited.get(t);
    if (awaited !== undefined) {
      awaited.count++;
      return;
    }
    let resolve: () => void = () => {};
    const done = new Promise<void>((r) => (resolve = r));
    this.#awaited.set(t, { ticket, count: 1, done, resolve });
  }

  sentSteps(ticket: ExpectedCacheTicket, state: ConversationState, atMs: number): Operation {
    const t = this.#ticketOf(ticket);
    const answer = this.#sharedFrom === 'end';
    if (answer) this.#await(ticket, t);
    if (answer) this.#lookedUp.add(ticket);
    if (answer) this.#open.set(t, ticket);
    const { from, hashes } = RemoteIndexDriver.#delta(state);
    this.#send({ e: 'sent', t, c: this.#conversationOf(ticket), from, hashes, known: state.known, promptLength: ticket.promptLength, totalBlocks: ticket.totalBlocks, at: epochMs(atMs), answer });
    return posted();
  }

  prefilledSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, atMs: number): Operation {
    const t = this.#ticketOf(ticket);
    // Its lookup's figures (sharedFrom 'end': they came with the send; its `seen` is brought up to its first token now).
    const lookup = state !== undefined;
    if (lookup) this.#await(ticket, t);
    if (lookup) this.#lookedUp.add(ticket);
    this.#send({ e: 'prefilled', t, at: epochMs(atMs), lookup });
    return posted();
  }

  routedSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, replica: string): Operation {
    const t = this.#tickets.get(ticket);
    // Never sent (its prompt unknown at the send): the owner holds no ticket to route.
    if (t === undefined) return posted();
    const answer = state !== undefined && this.#lookedUp.has(ticket);
    if (answer) this.#await(ticket, t);
    this.#send({ e: 'routed', t, replica, answer });
    return posted();
  }

  endSteps(ticket: ExpectedCacheTicket, state: ConversationState | undefined, totalBlocks: number, nowMs: number): Operation {
    const t = this.#ticketOf(ticket);
    this.#open.delete(t);
    if (state === undefined) {
      this.#send({ e: 'end', t, c: -1, from: 0, hashes: [], totalBlocks, at: epochMs(nowMs) });
      return posted();
    }
    const { from, hashes } = RemoteIndexDriver.#delta(state);
    this.#send({ e: 'end', t, c: this.#conversationOf(ticket), from, hashes, totalBlocks, at: epochMs(nowMs) });
    return posted();
  }

  answered(ticket: ExpectedCacheTicket): Promise<void> | undefined {
    const t = this.#tickets.get(ticket);
    const awaited = t === undefined ? undefined : this.#awaited.get(t);
    if (awaited === undefined) return undefined;
    // Bounded: a request whose figures do not come in time has none.
    const timer = setTimeout(() => {
      if (this.#awaited.delete(t!)) {
        ticket.known = false;
        awaited.resolve();
      }
    }, ANSWER_TIMEOUT_MS);
    timer.unref();
    return awaited.done.finally(() => clearTimeout(timer));
  }

  #onAnswers(answers: readonly IndexAnswer[]): void {
    for (const [t, expected, infinite, atSend, seen, smaller, gcd, samples, perReplica, slotHit, slotHitUnified, answersWait] of answers) {
      const awaited = this.#awaited.get(t);
      const open = awaited?.ticket ?? this.#open.get(t);
      if (open !== undefined) {
        open.slotHit = slotHit < 0 ? undefined : slotHit;
        open.slotHitUnified = slotHitUnified < 0 ? undefined : slotHitUnified;
      }
      if (awaited === undefined || answersWait === 0) continue;
      const { ticket } = awaited;
      ticket.hit.expected = expected;
      ticket.hit.infinite = infinite;
      if (perReplica >= 0) ticket.hit.perReplica = perReplica;
      ticket.atSend = atSend;
      ticket.seen = seen;
      ticket.smaller = smaller < 0 ? undefined : smaller;
      this.#granularity.set(ticket, { gcd, samples });
      if (--awaited.count > 0) continue;
      this.#awaited.delete(t);
      awaited.resolve();
    }
  }

  /** The account is made here from the owner's figures; its cached count goes to the owner's granularity. */
  account(ticket: ExpectedCacheTicket, cached: number, previous: MissFacts['previous']): CacheAccount {
    const g = { ...(this.#granularity.get(ticket) ?? { gcd: 0, samples: 0 }) };
    noteCached(g, cached);
    if (cached > 0) this.#send({ e: 'cached', n: cached });
    return accountOf(ticket, cached, g, this.#blockSize, previous, this.#layouts.slotHit(ticket, cached));
  }

  /** No more events; every request waiting for its figures goes on without them. */
  close(): void {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    for (const { ticket, resolve } of this.#awaited.values()) {
      ticket.known = false;
      resolve();
    }
    this.#awaited.clear();
    this.#port.close();
  }
}
