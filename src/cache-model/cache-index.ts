import { BlockIndex } from '../prefix-cache/block-index.js';
import { BlockPool, DEFAULT_STEP_BLOCKS, isSteps } from '../prefix-cache/block-pool.js';
import { gcd, missCause, warmStartTokens, type MissFacts } from './misses.js';
import type { Operation } from './operation-queue.js';
import type { CacheAccount, IndexTicket } from './expected-cache-types.js';
import { LlamacppSlotModels } from './llamacpp-slots.js';
import { ReplicaCaches } from './replica-caches.js';
import type { SharedFrom } from '../server-engine/cache-semantics.js';

/*
 * The expected-cache model's block indexes (issue #13), apart from the conversations they are fed by: what every
 * request of the run has left in a server's prefix cache, read by block hash. ExpectedCache (expected-cache.ts) drives
 * one in its own thread; with --workers the coordinator drives one for every worker thread (index-owner.ts), fed the
 * same events by message (index-transport.ts), so there is one index for the run whatever its threads (issue #31).
 * Each event is an Operation (operation-queue.ts): its caller runs the events in the order they came.
 */

/**
 * With `sharedFrom: 'prefill'` (SGLang), requests whose first tokens come within this many ms of each other are taken
 * as prefilled in the same engine step (one batch), which does not hit its own blocks. Engine steps last a few ms or
 * more, and the client reads one step's first tokens at one time (client/io-clock.ts) when they reach it together.
 * With `'schedule'` (vLLM) a batch-mate admitted later does hit them: the blocks are visible from the first token on.
 */
export const SAME_STEP_MS = 2;

/** What an index needs, fixed for the run. */
export interface CacheIndexConfig {
  /** Tokens per KV block. */
  blockSize: number;
  /** KV capacity in blocks; undefined for the infinite model only. */
  capacityBlocks?: number;
  /** Each replica's cache in the per-replica model, blocks; undefined: capacityBlocks. */
  replicaCapacityBlocks?: number;
  /** Blocks an index handles between two chances to let the loop go (BlockPool's stepBlocks). */
  stepBlocks?: number;
  /**
   * When a request's blocks are shared with others: from its engine step, batch-mates admitted after it included
   * (vLLM), after its prefill step (SGLang), or at its end (llama.cpp). @default 'prefill'
   */
  sharedFrom?: SharedFrom;
  /**
   * llama.cpp's slots (GET /props `total_slots`): with `sharedFrom: 'end'`, what its slots and prompt cache would reuse
   * of each prompt is followed too, to tell the misses they cause (llamacpp-slots.ts, misses.ts: slot_choice).
   */
  slots?: number;
}

/**
 * What the index keeps of one conversation between its requests, held by whoever keeps the conversation (its
 * ConversationState, or the owner's part).
 */
export interface ConversationNote {
  /** The replica its last request was looked up in (the per-replica caches' skip of known blocks). */
  replica?: string;
  /**
   * With a capacity: the entry ids in the infinite index of its leading blocks (the capacity model's keys), kept for
   * the blocks its next prompt leaves unchanged, so that a request looks up only its new blocks there.
   */
  entryIds?: number[];
}

/** A prompt as the index reads it: its conversation's block hashes, how many it registered already, and its note. */
export interface IndexPrompt {
  readonly keys: readonly number[];
  readonly known: number;
  readonly note?: ConversationNote;
}

/**
 * The granularity the server's cached counts share so far (misses.ts: block_rounding): their greatest common divisor,
 * taken as the server's block only once a few hits agree on a power of two (block and page sizes are).
 */
export interface ServerGranularity {
  gcd: number;
  /** Requests with cached tokens so far (the evidence). */
  samples: number;
}

/** Adds a request's server-reported cached tokens to the granularity's evidence. */
export function noteCached(g: ServerGranularity, cached: number): void {
  if (cached <= 0) return;
  g.gcd = gcd(g.gcd, cached);
  g.samples++;
}

/**
 * A request's server-reported `cached` tokens against the model's figures for it (the ticket's, final): its warm-start
 * tokens and its missed tokens with their cause. `g` already holds this request's cached count (noteCached).
 */
export function accountOf(ticket: IndexTicket, cached: number, g: ServerGranularity, blockSize: number, previous: MissFacts['previous'], slotHit?: number): CacheAccount {
  // One hit's count is its own divisor: a granularity needs a few.
  const granularity = g.samples >= 4 && g.gcd > 1 && g.gcd <= 4096 && (g.gcd & (g.gcd - 1)) === 0 ? g.gcd : 1;
  // More than a block beyond what the run could explain; 16 tokens at least, since a token-granular server's hit
  // may pass a block-cut answer's boundary by a few tokens.
  const warm = warmStartTokens(cached, Math.max(ticket.seen, ticket.hit.infinite), Math.max(16, blockSize, granularity));
  const served = cached - warm;
  const expected = ticket.hit.expected;
  if (expected <= served) return { warmStartTokens: warm, missedTokens: 0, missCause: null };
  const cause = missCause({ cached: served, expected, blockSize, serverGranularity: granularity, atSend: ticket.atSend, smallerCache: ticket.smaller, perReplica: ticket.hit.perReplica, previous, slotHit });
  return { warmStartTokens: warm, missedTokens: expected - served, missCause: cause };
}

/** The run's block indexes: one that never evicts, and with a capacity one LRU pool of it and one a quarter smaller. */
export class CacheIndex {
  readonly blockSize: number;
  readonly sharedFrom: SharedFrom;
  /** How long after its first token a prompt's blocks become visible to others' lookups (SAME_STEP_MS, or 0). */
  readonly #visibleAfterMs: number;
  readonly #infinite: BlockPool<number>;
  readonly #finite: BlockPool<number> | undefined;
  /** A cache a quarter smaller than #finite: what would also have been evicted (misses.ts). */
  readonly #smaller: BlockPool<number> | undefined;
  /**
   * Blocks of prompts sent and not yet in the infinite index (their requests in flight), with how many requests hold
   * each (the entries' refcounts): with the infinite index, everything the run has sent or received (warm start).
   * Bounded by what is in flight: a second index of every block seen doubled the model's memory and cost a walk of
   * the history per request. A typed-array index, not a Map: a Map of 53-bit hashes boxes each key (issue #33).
   */
  readonly #inFlight = new BlockIndex({ shards: 16, tracked: true });
  /** Requests prefilled whose prompt blocks are not visible yet, by first-token time (see prefilledSteps). */
  readonly #pending: Array<{ ticket: IndexTicket; atMs: number; hashes: readonly number[] }> = [];
  /** The server's granularity so far (account). */
  readonly granularity: ServerGranularity = { gcd: 0, samples: 0 };
  /** One cache per replica, as the routed events name them: the loss to routing (replica-caches.ts, issue #31). */
  readonly #replicas: ReplicaCaches;
  /** llama.cpp's slots and prompt cache (CacheIndexConfig.slots), when followed. */
  readonly #slots: LlamacppSlotModels | undefined;
  readonly #onSlotPlaced: ((ticket: IndexTicket) => void) | undefined;
  /**
   * Requests waiting for llama.cpp's slot, with their prompts: llama.cpp looks a prompt up when a slot takes it, so the
   * one ideal cache is read then too (the requests that ended meanwhile included), not at the send.
   */
  readonly #waiting = new Map<IndexTicket, IndexPrompt>();

  /**
   * `onSlotPlaced`: told of a request that waited for llama.cpp's slot and got it at another's end (its `slotHit` is set
   * now): the owner of a run in worker threads sends it on (index-owner.ts).
   */
  constructor(config: CacheIndexConfig, hooks: { onSlotPlaced?: (ticket: IndexTicket) => void } = {}) {
    this.blockSize = config.blockSize;
    this.sharedFrom = config.sharedFrom ?? 'prefill';
    this.#visibleAfterMs = this.sharedFrom === 'schedule' ? 0 : SAME_STEP_MS;
    const stepBlocks = config.stepBlocks ?? DEFAULT_STEP_BLOCKS;
    this.#infinite = new BlockPool<number>(Infinity, stepBlocks);
    const capacity = config.capacityBlocks;
    // Keyed by the infinite index's entry ids (BlockPool.entryIds): a block is hashed and looked up once, in the
    // infinite index, not once more in each of these.
    const byId = { directKeys: true };
    this.#finite = capacity === undefined ? undefined : new BlockPool<number>(capacity, stepBlocks, byId);
    this.#smaller = capacity === undefined ? undefined : new BlockPool<number>(Math.max(1, Math.floor((capacity * 3) / 4)), stepBlocks, byId);
    // With a capacity the replicas' pools evict too, and are keyed by entry ids as #finite is.
    this.#replicas = new ReplicaCaches(config.replicaCapacityBlocks ?? capacity ?? Infinity, stepBlocks, capacity !== undefined);
    this.#onSlotPlaced = hooks.onSlotPlaced;
    this.#slots = config.slots !== undefined && config.slots > 0 && this.sharedFrom === 'end' ? new LlamacppSlotModels(config.slots, this.blockSize) : undefined;
  }

  /** Replicas the per-replica caches have seen (at most MAX_REPLICAS). */
  get replicas(): number {
    return this.#replicas.size;
  }

  /** Blocks the infinite index holds: every distinct block seen in the run. */
  get cachedBlocks(): number {
    return this.#infinite.cachedBlocks;
  }

  /** Cached blocks evicted by the capacity model so far (0 without one). */
  get evictions(): number {
    return this.#finite?.evictions ?? 0;
  }

  /**
   * The request is sent: what the run had seen of its prompt (warm start), and the model's hit as the index stands
   * now (concurrency). With `sharedFrom: 'end'` this is also its lookup, since the server looks it up on arrival;
   * with llama.cpp's slots followed, a request that must wait for a slot is looked up when it gets one.
   */
  *sentSteps(ticket: IndexTicket, prompt: IndexPrompt, atMs: number): Operation {
    const { keys, known } = prompt;
    // Seen: the run's history (the infinite index), then prompts still in flight. This prompt's blocks past the
    // index are in flight from now on, until its end registers them. With a capacity, the blocks found are found by
    // entry id, the capacity model's keys.
    const indexed = this.#finite === undefined ? this.#infinite.match(keys, keys.length, known) : this.#infinite.entryIds(keys, this.#idsAtSend(ticket, prompt));
    // One lookup a block: a block already in flight extends what was seen while every block before it was too.
    let seen = indexed;
    const inFlight = this.#inFlight;
    for (let b = indexed; b < keys.length; b++) {
      const key = keys[b]!;
      let id = inFlight.find(key);
      if (id < 0) id = inFlight.add(key, 1);
      else {
        inFlight.setRefs(id, inFlight.refs(id) + 1);
        if (seen === b) seen++;
      }
      ticket.inFlight.push(id);
    }
    ticket.seen = seen * this.blockSize;
    if (this.sharedFrom === 'end') {
      if (this.#slots !== undefined) {
        yield* this.#slots.arriveSteps(ticket, keys, known, ticket.promptLength);
        if (this.#slots.waiting(ticket)) {
          this.#waiting.set(ticket, prompt);
          return;
        }
      }
      yield* this.#endLookupSteps(ticket, prompt, atMs);
    } else {
      const maxHit = Math.floor(Math.max(0, ticket.promptLength - 1) / this.blockSize);
      ticket.atSend = (this.#finite === undefined ? this.#infinite.match(keys, maxHit, known) : this.#finite.match(ticket.ids, maxHit)) * this.blockSize;
    }
  }

  /**
   * The ticket's ids at its send: its conversation's, kept for the `known` blocks its prompt left unchanged (only the
   * new blocks are then looked up), or its own.
   */
  #idsAtSend(ticket: IndexTicket, prompt: IndexPrompt): number[] {
    const note = prompt.note;
    const ids = note === undefined ? [] : (note.entryIds ??= []);
    if (ids.length > prompt.known) ids.length = prompt.known;
    ticket.ids = ids;
    return ids;
  }

  /**
   * The server computed the ticket's prompt: its first token came at `atMs` (performance.now() of this thread). With
   * `sharedFrom: 'schedule'` or `'prefill'` the prompt is looked up now rather than at the send, because a server looks
   * a prompt up when it admits it, after any queueing: a request that waited behind another with the same prefix hits
   * it. Its own blocks become visible to others SAME_STEP_MS later with `'prefill'` (SGLang): requests whose first
   * token comes in the same engine step were prefilled in the same batch, and such a batch does not hit its own
   * blocks. With `'schedule'` (vLLM) they are visible at once: a batch-mate admitted after it hits them, and the client
   * reads a step's first tokens in the order the server wrote them, its admission order. `prompt` undefined: nothing
   * to look up (its ids unknown), only the due publications run.
   */
  *prefilledSteps(ticket: IndexTicket, prompt: IndexPrompt | undefined, atMs: number): Operation {
    const visibleUntil = atMs - this.#visibleAfterMs;
    if (this.#due(visibleUntil)) yield* this.#publishSteps(visibleUntil);
    if (prompt !== undefined) this.#seenByFirstToken(ticket, prompt.keys);
    if (prompt !== undefined && this.sharedFrom !== 'end') yield* this.#lookupSteps(ticket, prompt, atMs);
    // A first token says the server gave the request a slot, though the model has it waiting still (the client saw
    // the ends and arrivals in another order than the server did): looked up now.
    if (this.#waiting.has(ticket)) yield* this.#waitedSteps(ticket, atMs);
  }

  /** sharedFrom 'end': the lookup, where the server looks a prompt up (on arrival, or when a slot takes it). */
  *#endLookupSteps(ticket: IndexTicket, prompt: IndexPrompt, atMs: number): Operation {
    yield* this.#lookupSteps(ticket, prompt, atMs);
    ticket.atSend = ticket.hit.expected;
  }

  /** The lookup of a request that waited for llama.cpp's slot, if it still waits for it here (checked first: no generator otherwise). */
  *#waitedSteps(ticket: IndexTicket, atMs: number): Operation {
    const prompt = this.#waiting.get(ticket);
    if (prompt === undefined) return;
    this.#waiting.delete(ticket);
    yield* this.#endLookupSteps(ticket, prompt, atMs);
  }

  /**
   * The ticket's `seen` (warm start) brought up to its first token, when the server had computed its prompt: a request
   * sent just after it may reach the server first, and one may end while it waits for llama.cpp's slot (seen on a live
   * llama-server: a first turn served 89 tokens of the system prompt of requests that ended while it waited, which the
   * send's reading called warm start). A block counts when a request that has not ended holds it too (the entry's
   * holders besides this ticket) or an ended one registered it. Starts where the send's reading stopped: a request
   * mostly looks up one block, its first new one. The prompt's blocks are those of its send (its conversation goes on
   * only at its end), of which the last `ticket.inFlight.length` were in flight.
   */
  #seenByFirstToken(ticket: IndexTicket, keys: readonly number[]): void {
    const inFlight = this.#inFlight;
    const firstInFlight = keys.length - ticket.inFlight.length;
    let b = ticket.seen / this.blockSize;
    while (b < keys.length && ((b >= firstInFlight && inFlight.refs(ticket.inFlight[b - firstInFlight]!) > 1) || this.#infinite.has(keys[b]!))) b++;
    ticket.seen = b * this.blockSize;
  }

  /** Looks the ticket's prompt up in each index, holding its blocks there until its end. */
  *#lookupSteps(ticket: IndexTicket, prompt: IndexPrompt, atMs: number): Operation {
    const bs = this.blockSize;
    // vLLM and llama.cpp compute at least the prompt's last token (its logits give the first output token): a hit
    // stops before it.
    const maxHit = Math.floor(Math.max(0, ticket.promptLength - 1) / bs);
    const keys = prompt.keys;
    // With a capacity, the blocks registered since the send are added to the ticket's ids: the infinite index holds
    // all its ids name, and the lookups in the capacity model's pools read them.
    const ids = ticket.ids;
    const known = this.#finite === undefined ? prompt.known : Math.max(prompt.known, this.#infinite.entryIds(keys, ids));
    // Each pool in turn, written out rather than through a generator closure: one generator fewer per pool and request.
    const admitted = this.#infinite.admitStepwise(keys, ticket.totalBlocks, maxHit, false, known);
    const infinite = isSteps(admitted) ? yield* admitted : admitted;
    ticket.leases.push({ pool: this.#infinite, lease: infinite.lease, byId: false });
    ticket.hit.infinite = infinite.hitBlocks * bs;
    if (this.#finite === undefined) ticket.hit.expected = ticket.hit.infinite;
    else {
      const admittedFinite = this.#finite.admitStepwise(ids, ticket.totalBlocks, maxHit, false, 0);
      const finite = isSteps(admittedFinite) ? yield* admittedFinite : admittedFinite;
      ticket.leases.push({ pool: this.#finite, lease: finite.lease, byId: true });
      ticket.hit.expected = finite.hitBlocks * bs;
      const admittedSmaller = this.#smaller!.admitStepwise(ids, ticket.totalBlocks, maxHit, false, 0);
      const smaller = isSteps(admittedSmaller) ? yield* admittedSmaller : admittedSmaller;
      ticket.leases.push({ pool: this.#smaller!, lease: smaller.lease, byId: true });
      ticket.smaller = smaller.hitBlocks * bs;
    }
    // The same prompt in the cache of the replica it went to (named by its response head, before its first token).
    if (ticket.replica !== undefined) yield* this.#replicaLookupSteps(ticket, prompt, maxHit);
    ticket.lookedUp = true;
    if (this.sharedFrom !== 'end') this.#pend(ticket, atMs, keys);
  }

  /**
   * A router sent the ticket's request to `replica` (its response head, before its first token; each attempt's, the
   * last before the lookup counts). A lookup still to run reads that replica's cache too (`hit.perReplica`); one that
   * ran already (at the send, sharedFrom 'end') is followed by the replica's own lookup now, in event order. `prompt`
   * undefined: its ids unknown, no figure.
   */
  *routedSteps(ticket: IndexTicket, prompt: IndexPrompt | undefined, replica: string): Operation {
    if (ticket.hit.perReplica !== undefined) return;
    ticket.replica = replica;
    if (ticket.lookedUp && prompt !== undefined) yield* this.#replicaLookupSteps(ticket, prompt, Math.floor(Math.max(0, ticket.promptLength - 1) / this.blockSize));
  }

  /** Looks the ticket's prompt up in its replica's cache, holding the blocks there until its end (as the main pools). */
  *#replicaLookupSteps(ticket: IndexTicket, prompt: IndexPrompt, maxHit: number): Operation {
    const pool = ticket.replica === undefined ? undefined : this.#replicas.poolOf(ticket.replica);
    if (pool === undefined || ticket.hit.perReplica !== undefined) return;
    // The conversation's blocks its previous request registered there, when nothing evicts: not looked up again, so
    // the work stays linear in what is new in the turn (a capacity evicts: then every block is looked up, as #finite).
    const { note } = prompt;
    const known = this.#finite === undefined && note !== undefined && note.replica === ticket.replica ? prompt.known : 0;
    // Keyed by entry ids (with a capacity): the ticket's, brought up to what the infinite index holds now (a lookup
    // after the ticket's own, at its routed event, may come after more of its blocks were registered).
    const byId = this.#replicas.byId;
    const admitted = pool.admitStepwise(this.#keysOf(ticket, prompt.keys, byId), ticket.totalBlocks, maxHit, false, known);
    const hit = isSteps(admitted) ? yield* admitted : admitted;
    ticket.leases.push({ pool, lease: hit.lease, byId });
    ticket.hit.perReplica = hit.hitBlocks * this.blockSize;
    if (note !== undefined) note.replica = ticket.replica;
  }

  /**
   * Queues a prefilled prompt for publication, in first-token order: fed from several threads, a first token may
   * arrive after a later one (index-owner.ts), and it goes in its place.
   */
  #pend(ticket: IndexTicket, atMs: number, hashes: readonly number[]): void {
    const pending = this.#pending;
    let at = pending.length;
    while (at > 0 && pending[at - 1]!.atMs > atMs) at--;
    if (at === pending.length) pending.push({ ticket, atMs, hashes });
    else pending.splice(at, 0, { ticket, atMs, hashes });
  }

  /** Whether a request prefilled at or before `untilMs` waits to be published (checked before making the generator). */
  #due(untilMs: number): boolean {
    return this.#pending.length > 0 && this.#pending[0]!.atMs <= untilMs;
  }

  /** Registers the prompt blocks of requests prefilled at or before `untilMs`, in the order they were. */
  *#publishSteps(untilMs: number): Operation {
    while (this.#due(untilMs)) {
      const { ticket, hashes } = this.#pending.shift()!;
      for (const { pool, lease, byId } of ticket.leases) {
        const rest = lease.heldBlocks > 0 ? pool.growStepwise(lease, this.#keysOf(ticket, hashes, byId), lease.heldBlocks) : undefined;
        if (rest !== undefined) yield* rest;
      }
    }
  }

  /**
   * The request ended at `nowMs`: its blocks up to `totalBlocks` of `keys` (its prompt and answer; undefined when
   * they are unknown, then only what it holds stays cached) are registered, then released; its prompt's blocks are
   * no longer in flight. `note`: its conversation's (IndexPrompt's), its replica forgotten when it had no replica's
   * lookup, since its blocks then went to no replica's cache that the next request could skip.
   */
  *endSteps(ticket: IndexTicket, keys: readonly number[] | undefined, totalBlocks: number, nowMs: number, note?: ConversationNote): Operation {
    // No first token while it waited for a slot here (not streamed, or failed): looked up before its blocks count.
    if (this.#waiting.has(ticket)) yield* this.#waitedSteps(ticket, nowMs);
    if (note !== undefined && ticket.hit.perReplica === undefined) note.replica = undefined;
    const visibleUntil = nowMs - this.#visibleAfterMs;
    if (this.#due(visibleUntil)) yield* this.#publishSteps(visibleUntil);
    for (const { pool, lease, byId } of ticket.leases) {
      const grown = keys !== undefined ? pool.growStepwise(lease, this.#keysOf(ticket, keys, byId), Math.max(totalBlocks, lease.heldBlocks)) : undefined;
      if (grown !== undefined) yield* grown;
      const released = pool.releaseStepwise(lease);
      if (released !== undefined) yield* released;
    }
    // An entry stays while a request holds it: its id is the one taken at the send.
    const inFlight = this.#inFlight;
    for (const id of ticket.inFlight) {
      const holders = inFlight.refs(id);
      if (holders > 1) inFlight.setRefs(id, holders - 1);
      else inFlight.remove(id);
    }
    ticket.inFlight.length = 0;
    if (this.#slots === undefined) return;
    const placed = yield* this.#slots.endSteps(ticket, keys, keys === undefined ? 0 : Math.min(keys.length, totalBlocks));
    // The requests that got their slot at this end are looked up now, this request's blocks included.
    for (const p of placed as IndexTicket[]) {
      yield* this.#waitedSteps(p, nowMs);
      this.#onSlotPlaced?.(p);
    }
  }

  /**
   * A pool's keys for the ticket's blocks `hashes`: the hashes, or (`byId`) their entry ids in the infinite index, which
   * has registered the blocks before (its lease comes first) and so holds an id for each block these pools register.
   */
  #keysOf(ticket: IndexTicket, hashes: readonly number[], byId: boolean): readonly number[] {
    if (byId && ticket.ids.length < hashes.length) this.#infinite.entryIds(hashes, ticket.ids);
    return byId ? ticket.ids : hashes;
  }

  /** The request's server-reported `cached` tokens against its final figures (see accountOf). */
  account(ticket: IndexTicket, cached: number, previous: MissFacts['previous']): CacheAccount {
    noteCached(this.granularity, cached);
    return accountOf(ticket, cached, this.granularity, this.blockSize, previous, this.#slots?.slotHit(ticket, cached));
  }
}
