import type { MessagePort } from 'node:worker_threads';
import { CacheIndex, noteCached, type CacheIndexConfig, type ConversationNote, type IndexPrompt } from './cache-index.js';
import type { IndexTicket } from './expected-cache-types.js';
import type { IndexAnswer, IndexAnswers, IndexEvent, IndexEvents } from './index-transport.js';
import { OperationQueue, type Operation } from './operation-queue.js';

/*
 * The run's one expected-cache index when its load runs in worker threads (issue #31): the coordinator owns it, and
 * each worker sends its requests' index events here (index-transport.ts). The events run in the order they arrive,
 * one at a time through an OperationQueue, so the owner's event loop is never held longer than a slice; a request's
 * figures go back to its worker once its lookup has run. Times come as epoch ms and are read on this thread's clock.
 */

/** The longest the index's operations run before letting the loop go, in ms (as ExpectedCache's). */
const SLICE_MS = 0.5;

/**
 * A request as the owner holds it: its ticket, the blocks it had registered at the send, its conversation, and its
 * worker's number for it and side.
 */
type OwnedTicket = IndexTicket & { known: number; c: number; t: number; part: Part };

/** One worker's side of the index: its open requests and its conversations' hashes. */
interface Part {
  readonly port: MessagePort;
  readonly tickets: Map<number, OwnedTicket>;
  /** Each conversation's block hashes, as its worker sent them. */
  readonly hashes: Map<number, number[]>;
  /** Each conversation's note (IndexPrompt's). */
  readonly notes: Map<number, ConversationNote>;
  answers: IndexAnswer[];
  flushing: boolean;
  /** Its port is closed (the worker died, or the run ended). */
  closed: boolean;
}

/** The run's index, fed by its workers' ports. */
export class IndexOwner {
  readonly #index: CacheIndex;
  readonly #queue: OperationQueue;
  readonly #parts = new Map<number, Part>();
  /** Messages received and sent (the bench's count). */
  received = 0;
  sent = 0;

  constructor(config: CacheIndexConfig & { sliceMs?: number }) {
    // A request that waited for llama.cpp's slot got its figure at another's end: sent on, as a lookup's answer is.
    const onSlotPlaced = (ticket: IndexTicket): void => {
      const owned = ticket as OwnedTicket;
      if (!owned.part.closed) this.#answer(owned.part, owned.t, owned, 0);
    };
    this.#index = new CacheIndex(config, { onSlotPlaced });
    this.#queue = new OperationQueue(config.sliceMs ?? SLICE_MS);
  }

  /** Replicas the per-replica caches have seen. */
  get replicas(): number {
    return this.#index.replicas;
  }

  /** Blocks the infinite index holds, and the capacity model's evictions. */
  get cachedBlocks(): number {
    return this.#index.cachedBlocks;
  }

  get evictions(): number {
    return this.#index.evictions;
  }

  /** Requests sent whose end has not arrived yet, over every worker. */
  get openRequests(): number {
    let n = 0;
    for (const part of this.#parts.values()) n += part.tickets.size;
    return n;
  }

  /** Takes worker `index`'s events from `port` (its end of the channel whose other end its RemoteIndexDriver holds). */
  attach(index: number, port: MessagePort): void {
    const part: Part = { port, tickets: new Map(), hashes: new Map(), notes: new Map(), answers: [], flushing: false, closed: false };
    this.#parts.set(index, part);
    port.on('message', (message: IndexEvents) => {
      this.received++;
      for (const event of message.events) this.#take(part, event);
    });
  }

  /** Worker `index` died: its requests in flight end with nothing more cached, and its conversations are dropped. */
  drop(index: number): void {
    const part = this.#parts.get(index);
    if (part === undefined) return;
    this.#parts.delete(index);
    const now = performance.now();
    for (const ticket of part.tickets.values()) this.#run(this.#index.endSteps(ticket, undefined, 0, now));
    part.tickets.clear();
    part.hashes.clear();
    part.notes.clear();
    part.closed = true;
    part.port.close();
  }

  /** Stops taking events (the run's load has ended). */
  close(): void {
    for (const part of this.#parts.values()) {
      part.closed = true;
      part.port.close();
    }
    this.#parts.clear();
  }

  #run(steps: Operation): void {
    // An operation's failure is a bug of the model: the request goes without figures, the run goes on.
    this.#queue.run(steps)?.catch(() => {});
  }

  #take(part: Part, event: IndexEvent): void {
    switch (event.e) {
      case 'sent': {
        const { promptLength, totalBlocks, known, c } = event;
        const ticket = { hit: { expected: 0, infinite: 0 }, promptLength, totalBlocks, atSend: 0, seen: 0, inFlight: [], smaller: undefined, slotHit: undefined, slotHitUnified: undefined, ids: [], leases: [], replica: undefined, lookedUp: false, known, c, t: event.t, part };
        part.tickets.set(event.t, ticket);
        return this.#run(this.#sentSteps(part, ticket, event));
      }
      case 'prefilled': {
        const ticket = part.tickets.get(event.t);
        if (ticket !== undefined) this.#run(this.#prefilledSteps(part, ticket, event));
        return;
      }
      case 'routed': {
        const ticket = part.tickets.get(event.t);
        if (ticket !== undefined) this.#run(this.#routedSteps(part, ticket, event));
        return;
      }
      case 'end': {
        const ticket = part.tickets.get(event.t);
        part.tickets.delete(event.t);
        if (ticket !== undefined) this.#run(this.#endSteps(part, ticket, event));
        return;
      }
      case 'cached':
        return noteCached(this.#index.granularity, event.n);
      case 'forget':
        part.hashes.delete(event.c);
        part.notes.delete(event.c);
        return;
    }
  }

  /** The conversation's hashes, brought up to date (in queue order, as the worker's chain was at the event). */
  #hashesOf(part: Part, c: number, from: number, hashes: readonly number[]): number[] {
    let keys = part.hashes.get(c);
    if (keys === undefined) part.hashes.set(c, (keys = []));
    keys.length = Math.min(keys.length, from);
    for (const h of hashes) keys.push(h);
    return keys;
  }

  /** The conversation's note (IndexPrompt's), made at its first use. */
  #noteOf(part: Part, c: number): ConversationNote {
    let note = part.notes.get(c);
    if (note === undefined) part.notes.set(c, (note = {}));
    return note;
  }

  *#sentSteps(part: Part, ticket: OwnedTicket, event: Extract<IndexEvent, { e: 'sent' }>): Operation {
    const keys = this.#hashesOf(part, event.c, event.from, event.hashes);
    yield* this.#index.sentSteps(ticket, { keys, known: ticket.known, note: this.#noteOf(part, event.c) }, event.at - performance.timeOrigin);
    if (event.answer) this.#answer(part, event.t, ticket);
  }

  *#prefilledSteps(part: Part, ticket: OwnedTicket, event: Extract<IndexEvent, { e: 'prefilled' }>): Operation {
    yield* this.#index.prefilledSteps(ticket, event.lookup ? this.#promptOf(part, ticket) : undefined, event.at - performance.timeOrigin);
    if (event.lookup) this.#answer(part, event.t, ticket);
  }

  *#routedSteps(part: Part, ticket: OwnedTicket, event: Extract<IndexEvent, { e: 'routed' }>): Operation {
    yield* this.#index.routedSteps(ticket, event.answer ? this.#promptOf(part, ticket) : undefined, event.replica);
    if (event.answer) this.#answer(part, event.t, ticket);
  }

  /** The ticket's prompt: its conversation's hashes as they stand (undefined when none came). */
  #promptOf(part: Part, ticket: OwnedTicket): IndexPrompt | undefined {
    const keys = part.hashes.get(ticket.c);
    return keys === undefined ? undefined : { keys, known: ticket.known, note: this.#noteOf(part, ticket.c) };
  }

  *#endSteps(part: Part, ticket: IndexTicket, event: Extract<IndexEvent, { e: 'end' }>): Operation {
    const keys = event.c < 0 ? undefined : this.#hashesOf(part, event.c, event.from, event.hashes);
    yield* this.#index.endSteps(ticket, keys, event.totalBlocks, event.at - performance.timeOrigin, event.c < 0 ? undefined : this.#noteOf(part, event.c));
  }

  /** Sends the ticket's figures to its worker, with every other answer of this turn of the loop. */
  #answer(part: Part, t: number, ticket: IndexTicket, answersWait: 0 | 1 = 1): void {
    const g = this.#index.granularity;
    part.answers.push([t, ticket.hit.expected, ticket.hit.infinite, ticket.atSend, ticket.seen, ticket.smaller ?? -1, g.gcd, g.samples, ticket.hit.perReplica ?? -1, ticket.slotHit ?? -1, ticket.slotHitUnified ?? -1, answersWait]);
    if (part.flushing) return;
    part.flushing = true;
    setImmediate(() => {
      part.flushing = false;
      if (part.answers.length === 0 || part.closed) return;
      const message: IndexAnswers = { answers: part.answers };
      part.answers = [];
      this.sent++;
      part.port.postMessage(message);
    });
  }
}
