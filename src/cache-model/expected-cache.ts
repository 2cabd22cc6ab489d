import { BlockHashChain } from '../prefix-cache/block-hash.js';
import type { ChatMessage, TokenCounter } from '../tokenizer/index.js';
import { withToolsTurn } from '../tokenizer/tools-prompt.js';
import { letLoopGo } from '../util/loop-turns.js';
import { encodeIdsYielding } from '../tokenizer/sliced.js';
import { ServerTokenizer, type ServerTokenizerSpec } from '../client/server-tokenizer.js';
import { CacheIndex, SAME_STEP_MS } from './cache-index.js';
import { LocalIndexDriver, type IndexDriver } from './index-driver.js';
import { OperationQueue, type Operation } from './operation-queue.js';
import { PromptIds, restartMarkers } from './prompt-ids.js';
import { commonIds, joinedIds, type ConversationState } from './conversation-state.js';
import type { CacheAccount, CachedAnswer, ExpectedCacheTicket } from './expected-cache-types.js';
import type { SharedFrom } from '../server-engine/cache-semantics.js';

export type { CacheAccount, CachedAnswer, ExpectedCacheTicket, ExpectedHit } from './expected-cache-types.js';
export { SAME_STEP_MS };

/*
 * The global expected-cache model (issue #13): one block index of every token sequence the server has seen in this
 * run (each prompt as the chat template renders it, then each answer as it came back), shared by all conversations
 * (and by every worker thread's, issue #31: the index is the coordinator's then).
 * A request's expected cached tokens are the longest block-aligned prefix of its prompt already in the index, capped
 * as vLLM caps a hit (at least the last prompt token is computed). Two indexes run side by side: one never evicts
 * (the infinite model), one with --kv-cache-tokens evicts LRU as a server's block pool does; the main figure is the
 * finite one when a capacity is given. Per request: the new text of the turn is rendered, encoded and hashed, nothing
 * more, with a message-by-message template such as ChatML (a Jinja template is rendered whole: see prompt-ids.ts).
 *
 * Nothing holds the event loop for long, even for a 10 MB message (issue #14): its prompt is encoded and hashed in
 * slices, and the indexes' work (a lookup, registering ~156,000 blocks, releasing them) runs as stepped operations
 * (BlockPool's `*Stepwise`) in call order, one at a time: an operation that outlasts SLICE_MS lets the loop go and
 * finishes later, and the ones called meanwhile wait behind it. So every lookup sees exactly the index it would have
 * seen had each operation run whole at its call: the figures do not depend on the slicing. A request's `hit` is final
 * once `settled(ticket)` resolves, and `end` resolves when its release has run.
 *
 * Each engine's cache semantics (issue #30, docs/ENGINES.md): `sharedFrom: 'schedule'` or `'prefill'` (vLLM, SGLang: a
 * prompt is looked up when the server admits it, taken as its first token, and its blocks are shared from that step,
 * with the requests admitted after it in the step (vLLM) or only once the step is done (SGLang)), or `'end'`
 * (llama.cpp: a slot's tokens become reusable once its request ends, and a slot is taken, and its cache looked up, on
 * arrival: at the send). The ids are the local tokenizer's, or the server's own (`serverTokens`): then a prompt's
 * ids come from the server after the send, and the operations that need them wait for them in call order
 * (OperationQueue), so nothing sits between a request's due time and its send.
 */

/** Tokens hashed between yields to the event loop (about a millisecond of work). */
const HASH_CHUNK_TOKENS = 128 * 1024;

/** The longest the indexes' operations run before letting the event loop go, in ms. */
const SLICE_MS = 0.5;

/** What the model needs, fixed for the run. */
export interface ExpectedCacheConfig {
  /** Tokens per KV block (--cache-block-size). */
  blockSize: number;
  /** KV capacity in blocks (--kv-cache-tokens / block size); undefined for the infinite model only. */
  capacityBlocks?: number;
  /** Each replica's cache in the per-replica model, blocks, when a router page sums its replicas'; undefined: capacityBlocks. */
  replicaCapacityBlocks?: number;
  /** Blocks an index handles between two chances to let the loop go (BlockPool's stepBlocks); tests set it small. */
  stepBlocks?: number;
  /** The longest the indexes' operations run before letting the loop go, in ms (default SLICE_MS); tests set 0. */
  sliceMs?: number;
  /** When a request's blocks are shared with others (see the comment at the top). @default 'prefill' */
  sharedFrom?: SharedFrom;
  /** llama.cpp's slots, followed to tell the misses they cause (CacheIndexConfig.slots). */
  slots?: number;
  /** Ask the server for prompt ids (its tokenize endpoints) instead of the local tokenizer. */
  serverTokens?: ServerTokenizerSpec;
  /**
   * With `serverTokens`: the prompt's and the answer's ids come with each answer (vLLM's `return_token_ids`), and its
   * tokenize endpoint is asked only for an answer that came without them (see supplyPromptIds).
   */
  idsFromResponse?: boolean;
}

const SETTLED = Promise.resolve();



/**
 * The run's expected-cache model, one per engine. Its block indexes are in cache-index.ts, reached through an
 * IndexDriver: with --workers each worker thread's model renders, encodes and hashes its own conversations and feeds
 * the run's one index in the coordinator (index-transport.ts, index-owner.ts; issue #31, docs/METRICS.md "Scope").
 */
export class ExpectedCache {
  readonly blockSize: number;
  readonly capacityBlocks: number | undefined;
  readonly sharedFrom: SharedFrom;
  /** The server's tokenize endpoints, when the model counts in the server's ids. */
  readonly server: ServerTokenizer | undefined;
  /** The prompt's and answer's ids come with the answer (vLLM's return_token_ids): see supplyPromptIds. */
  readonly idsFromResponse: boolean;
  /** In that mode, how each ticket's prompt ids are given, once: the answer's, or the tokenize endpoint's. */
  readonly #supply = new WeakMap<ExpectedCacheTicket, (ids: readonly number[] | undefined) => void>();
  readonly #counter: TokenCounter;
  readonly #markers: RegExp | null;
  /** Where the index events go: this thread's index, or the run's in the coordinator thread (index-driver.ts). */
  readonly #index: IndexDriver;
  readonly #states = new WeakMap<object, ConversationState>();
  readonly #queue: OperationQueue;
  /** Scratch for #joined. */
  #scratch = new Uint32Array(1024);
  /**
   * `index`: where the index events go, by default an index of this thread's own; with --workers, the transport to the
   * run's one index in the coordinator thread (index-transport.ts, issue #31).
   */
  constructor(counter: TokenCounter, config: ExpectedCacheConfig, signal?: AbortSignal, index?: IndexDriver) {
    this.#counter = counter;
    this.blockSize = config.blockSize;
    this.capacityBlocks = config.capacityBlocks;
    this.sharedFrom = config.sharedFrom ?? 'prefill';
    this.#queue = new OperationQueue(config.sliceMs ?? SLICE_MS);
    this.#index = index ?? new LocalIndexDriver(new CacheIndex(config));
    this.server = config.serverTokens === undefined ? undefined : new ServerTokenizer(config.serverTokens, signal);
    this.idsFromResponse = this.server !== undefined && config.idsFromResponse === true;
    this.#markers = this.server === undefined ? restartMarkers(counter) : null;
  }

  /**
   * The request event that names the replica a router sent the ticket's request to (its response head, before its
   * first token; each attempt's, the last before the lookup counts). The lookup then also reads that replica's own
   * cache (`hit.perReplica`); a replica named after the lookup ran (a lookup at the send, sharedFrom 'end') is looked
   * up on its own. In call order with the ticket's other events, through the index driver (so with --workers the
   * run's one index in the coordinator holds the replicas' caches too). Unknown replicas past MAX_REPLICAS are left
   * out (no figure).
   */
  routed(ticket: ExpectedCacheTicket, replica: string): void {
    const run = (): Promise<void> | undefined => this.#queue.run(this.#routedSteps(ticket, replica));
    // With the ids from the answer, queued once they are in, as the send-time reading and the lookup are (see begin).
    const routed = this.idsFromResponse && ticket.pending ? ticket.ready.then(run) : run();
    if (routed === undefined) return;
    routed.catch(() => {});
    const before = ticket.lookup;
    ticket.lookup = before === undefined ? routed : Promise.all([before, routed]).then(() => undefined);
  }

  *#routedSteps(ticket: ExpectedCacheTicket, replica: string): Operation {
    if (ticket.pending) yield ticket.ready;
    yield* this.#index.routedSteps(ticket, this.#current(ticket), replica);
  }

  /** Blocks the infinite index holds: every distinct block seen in the run. */
  get cachedBlocks(): number {
    return this.#index.cachedBlocks;
  }

  /** Cached blocks evicted by the capacity model so far (0 without one). */
  get evictions(): number {
    return this.#index.evictions;
  }

  /** Replicas the per-replica caches have seen (at most MAX_REPLICAS; 0 when the index is in another thread). */
  get replicas(): number {
    return this.#index.replicas;
  }

  /**
   * A request of `conversation` (any object that lives as long as the conversation) is about to be sent with
   * `messages`. With the local tokenizer its prompt is encoded and hashed (its new tokens only) before this resolves;
   * with the server's ids it resolves at once, and they are asked for meanwhile (ticket.ready). Call `prefilled` as
   * its first token comes and `end` when it ends. `maxTokens`: the request's output budget, when it has one; its
   * blocks are taken at once, as a server allocates them while the answer streams, evicting as it goes, before the
   * answer's end is seen here. `tools`: the request's tool definitions, rendered into its prompt.
   */
  async begin(conversation: object, messages: readonly ChatMessage[], maxTokens?: number, tools?: readonly unknown[]): Promise<ExpectedCacheTicket> {
    let state = this.#states.get(conversation);
    if (state === undefined) {
      const ids = this.server === undefined ? new PromptIds(this.#counter.tokenizer, this.#markers) : undefined;
      state = { ids, chain: new BlockHashChain(this.blockSize), last: new Uint32Array(0), lastLength: 0, registered: 0, known: 0, changedFrom: 0, entryIds: undefined, previous: undefined };
      this.#states.set(conversation, state);
    }
    const sentAtMs = performance.now();
    const ticket: ExpectedCacheTicket = {
      hit: { expected: 0, infinite: 0 },
      conversation,
      promptLength: 0,
      totalBlocks: 0,
      ready: SETTLED,
      pending: true,
      known: true,
      atSend: 0,
      seen: 0,
      inFlight: [],
      smaller: undefined,
      slotHit: undefined,
      slotHitUnified: undefined,
      ids: [],
      leases: [],
      lookupAsked: false,
      lookup: undefined,
      replica: undefined,
      lookedUp: false,
    };
    const prepared = this.#prepare(state, ticket, this.#promptIdsOf(ticket, messages, tools), maxTokens);
    // A failed tokenize call leaves the request without a figure (ticket.known); it never fails the request.
    (ticket as { ready: Promise<void> }).ready = prepared.then(
      () => void (ticket.pending = false),
      () => {
        ticket.pending = false;
        ticket.known = false;
      },
    );
    if (this.server === undefined) await ticket.ready;
    if (this.idsFromResponse) {
      // The ids come with the answer (about its first token): the index is read then, not at the send, so that no
      // operation waits in the queue for a request's first token.
      ticket.lookup = ticket.ready.then(() => this.#queue.run(this.#sentSteps(ticket, sentAtMs)));
      return ticket;
    }
    // In call order, as the request goes out: what the index holds at the send.
    const sent = this.#queue.run(this.#sentSteps(ticket, sentAtMs));
    sent?.catch(() => {});
    if (this.sharedFrom === 'end') ticket.lookup = sent;
    return ticket;
  }

  /**
   * The prompt's ids: its messages, for PromptIds to encode locally; asked of the server's tokenize endpoint; or, with
   * idsFromResponse, whatever supplyPromptIds is given.
   */
  #promptIdsOf(ticket: ExpectedCacheTicket, messages: readonly ChatMessage[], tools: readonly unknown[] | undefined): Promise<Uint32Array> | { messages: readonly ChatMessage[]; tools: readonly unknown[] | undefined } {
    if (this.server === undefined) return { messages, tools };
    if (!this.idsFromResponse) return this.server.promptIds(messages, tools);
    return new Promise<Uint32Array>((resolve, reject) => {
      this.#supply.set(ticket, (ids) => {
        this.#supply.delete(ticket);
        if (ids !== undefined) resolve(Uint32Array.from(ids));
        else this.server!.promptIds(messages, tools).then(resolve, reject);
      });
    });
  }

  /**
   * idsFromResponse: the prompt's ids as the answer gave them (its first chunk), or undefined when the answer came
   * without them (a server that ignores return_token_ids, a failed request): then the tokenize endpoint is asked.
   * Only the first call counts.
   */
  supplyPromptIds(ticket: ExpectedCacheTicket, ids: readonly number[] | undefined): void {
    this.#supply.get(ticket)?.(ids);
  }

  /** Brings the conversation's ids and hashes to this prompt, and sizes the ticket. */
  async #prepare(
    state: ConversationState,
    ticket: ExpectedCacheTicket,
    source: Promise<Uint32Array> | { messages: readonly ChatMessage[]; tools: readonly unknown[] | undefined },
    maxTokens: number | undefined,
  ): Promise<void> {
    let ids: Uint32Array;
    let length: number;
    let unchanged: number;
    if (source instanceof Promise) {
      ids = await source;
      length = ids.length;
      unchanged = commonIds(state.last, state.lastLength, ids, length);
    } else {
      const { messages, tools } = source;
      const template = this.#counter.template;
      const local = state.ids!; // made for a local tokenizer (begin)
      // The request's tool definitions are part of its prompt, as a server renders them (tokenizer/tools-prompt.ts).
      const update =
        template.incremental !== undefined
          ? await local.updateMessages(withToolsTurn(messages, tools), template.incremental)
          : await local.update(template.apply(messages, { addGenerationPrompt: true, tools }));
      ({ ids, length, unchanged } = update);
    }
    // Hashed in chunks with the loop let go between them: a 10 MB message is ~156,000 blocks (issue #14).
    state.changedFrom = Math.min(state.changedFrom, Math.floor(unchanged / this.blockSize), state.chain.hashes.length);
    for (let from = unchanged; ; from += HASH_CHUNK_TOKENS) {
      state.chain.sync(ids, Math.min(length, from + HASH_CHUNK_TOKENS), from);
      if (from + HASH_CHUNK_TOKENS >= length) break;
      await letLoopGo();
    }
    state.known = Math.min(state.registered, Math.floor(unchanged / this.blockSize));
    state.registered = state.known;
    state.last = ids;
    state.lastLength = length;
    ticket.promptLength = length;
    ticket.totalBlocks = Math.ceil((length + Math.max(0, (maxTokens ?? 0) - 1)) / this.blockSize);
  }

  /**
   * The request is sent: what the run had seen of its prompt (warm start), and the model's hit as the index stands
   * now (concurrency). With `sharedFrom: 'end'` this is also its lookup, since the server looks it up on arrival.
   */
  *#sentSteps(ticket: ExpectedCacheTicket, atMs: number): Operation {
    if (ticket.pending) yield ticket.ready;
    const state = this.#current(ticket);
    if (state === undefined) return;
    yield* this.#index.sentSteps(ticket, state, atMs);
  }

  /** The ticket's conversation, when the ticket's prompt is known and still its latest; else undefined. */
  #current(ticket: ExpectedCacheTicket): ConversationState | undefined {
    const state = this.#states.get(ticket.conversation);
    return ticket.known && state !== undefined && state.lastLength === ticket.promptLength ? state : undefined;
  }

  /**
   * The server computed the ticket's prompt: its first token came at `atMs` (performance.now(), the record's time).
   * The prompt is looked up in the indexes now rather than at the send, because a server looks a prompt up when it
   * admits it, after any queueing: a request that waited behind another with the same prefix hits it. Its own blocks
   * become visible to the lookups after it at once with `'schedule'` (vLLM: a batch-mate admitted later hits them),
   * SAME_STEP_MS later with `'prefill'` (SGLang: a batch does not hit its own blocks; CacheIndex.prefilledSteps). The
   * lookup may wait behind a large registration: read the ticket's `hit` after `settled(ticket)`. With
   * `sharedFrom: 'end'` the lookup was at the send, or is when llama.cpp's slots give the request one (CacheIndex);
   * what the run had sent by now is read either way (the warm start's measure: a request sent later may reach the
   * server first, or end while this one waits for a slot).
   */
  prefilled(ticket: ExpectedCacheTicket, atMs: number): void {
    if (ticket.lookupAsked) return;
    ticket.lookupAsked = true;
    if (this.idsFromResponse && ticket.pending) {
      // Queued once the ids are in (see begin), behind the send-time reading.
      ticket.lookup = ticket.ready.then(() => this.#queue.run(this.#prefilledSteps(ticket, atMs)));
      ticket.lookup.catch(() => {});
      return;
    }
    const lookup = this.#queue.run(this.#prefilledSteps(ticket, atMs));
    // Its failure (a bug) reaches whoever awaits settled(); unawaited, it must not end the process.
    lookup?.catch(() => {});
    ticket.lookup = lookup;
  }

  /** Resolves when the ticket's `hit` is final (at once unless its lookup waits behind a large registration). */
  settled(ticket: ExpectedCacheTicket): Promise<void> {
    const lookup = ticket.lookup;
    if (lookup === undefined) return this.#index.answered(ticket) ?? SETTLED;
    return lookup.then(() => this.#index.answered(ticket));
  }

  *#prefilledSteps(ticket: ExpectedCacheTicket, atMs: number): Operation {
    if (ticket.pending) yield ticket.ready;
    yield* this.#index.prefilledSteps(ticket, this.#current(ticket), atMs);
  }

  /**
   * The request ended. `answer`: what the server generated and so cached after the prompt (the answer as it came
   * back: its ids, or its text, encoded here by the model's tokenizer or the server's), or undefined when it failed
   * or they are unknown; then only the prompt stays cached. Resolves when its blocks are released (at once unless it
   * waits behind a large registration, or is one).
   */
  end(ticket: ExpectedCacheTicket, answer: CachedAnswer | undefined): Promise<void> {
    const nowMs = performance.now();
    // No first token (not streamed, or failed): looked up now.
    const lookUp = !ticket.lookupAsked;
    ticket.lookupAsked = true;
    const answerIds = this.#answerIds(answer);
    const ended = this.#queue.run(this.#endSteps(ticket, answerIds, answer, nowMs, lookUp));
    if (lookUp) ticket.lookup = ended;
    return ended ?? SETTLED;
  }

  /** The answer's ids: as given, or its text encoded (locally in slices, or by the server); undefined when unknown. */
  #answerIds(answer: CachedAnswer | undefined): ArrayLike<number> | Promise<ArrayLike<number>> | undefined {
    if (answer === undefined || !('text' in answer)) return answer;
    if (answer.reasoning) return undefined;
    return this.server !== undefined ? this.server.textIds(answer.text) : encodeIdsYielding(this.#counter.tokenizer, answer.text);
  }

  *#endSteps(ticket: ExpectedCacheTicket, pendingIds: ArrayLike<number> | Promise<ArrayLike<number>> | undefined, answer: CachedAnswer | undefined, nowMs: number, lookUp: boolean): Operation {
    if (lookUp) yield* this.#prefilledSteps(ticket, nowMs);
    let answerIds: ArrayLike<number> | undefined;
    if (pendingIds instanceof Promise) {
      const settledIds = pendingIds.then((ids) => (answerIds = ids)).catch(() => undefined);
      yield settledIds;
    } else answerIds = pendingIds;
    const bs = this.blockSize;
    let totalBlocks = 0;
    const state = this.#current(ticket);
    const current = state !== undefined;
    if (current) {
      const reasoning = answer !== undefined && 'text' in answer && (answer.reasoning || /^\s*<think>/.test(answer.text));
      state.previous = { promptLength: ticket.promptLength, answerLength: answerIds?.length ?? 0, reasoning };
    }
    if (answerIds !== undefined && answerIds.length > 0 && current) {
      const head = state.chain.hashes.length * bs;
      // The prompt's partial tail block, then the answer: hashed on from the prompt's last full block (at once when
      // it is one chunk, as nearly every answer is: no generator).
      const partial = state.last.subarray(head, ticket.promptLength);
      if (partial.length + answerIds.length <= HASH_CHUNK_TOKENS) state.chain.extend(this.#joined(partial, answerIds));
      else yield* this.#extendSteps(state.chain, partial, answerIds);
      // The last sampled token's KV is never computed (see CachedAnswer): the end-of-sequence token after a stop, else
      // the answer's own last token.
      const stopped = answer !== undefined && 'text' in answer && answer.finishReason === 'stop';
      totalBlocks = Math.ceil((ticket.promptLength + answerIds.length - (stopped ? 0 : 1)) / bs);
    }
    yield* this.#index.endSteps(ticket, state, totalBlocks, nowMs);
    // Every full block of the prompt (and answer) is in the infinite index now.
    if (current) state.registered = Math.min(state.chain.hashes.length, Math.max(totalBlocks, ticket.totalBlocks));
  }

  /**
   * The request's server-reported `cached` tokens against the model (call after `settled`, before `end`): the
   * warm-start tokens (cached beyond anything the run had sent, kept out of efficiency), and the missed tokens
   * (expected beyond cached) with their cause (cache-model/misses.ts).
   */
  account(ticket: ExpectedCacheTicket, cached: number | null): CacheAccount {
    if (cached === null || !ticket.known) return { warmStartTokens: 0, missedTokens: 0, missCause: null };
    return this.#index.account(ticket, cached, this.#states.get(ticket.conversation)?.previous);
  }

  /**
   * `partial` then `answerIds` in one array. Up to one chunk long, in a scratch array kept for the next (read at once
   * by the caller, before anything else runs): a fresh Uint32Array per request is an ArrayBuffer of its own outside
   * V8's heap, slow to make and to sweep (issue 17).
   */
  #joined(partial: Uint32Array, answerIds: ArrayLike<number>): Uint32Array {
    const length = partial.length + answerIds.length;
    if (length > HASH_CHUNK_TOKENS) return joinedIds(new Uint32Array(length), partial, answerIds);
    if (this.#scratch.length < length) this.#scratch = new Uint32Array(Math.min(HASH_CHUNK_TOKENS, Math.max(length, this.#scratch.length * 2)));
    return joinedIds(this.#scratch.subarray(0, length), partial, answerIds);
  }

  /** Extends `chain` by `partial` (a prompt's partial tail block) then `answerIds`, hashed in chunks between pauses. */
  *#extendSteps(chain: BlockHashChain, partial: Uint32Array, answerIds: ArrayLike<number>): Generator<void, readonly number[], void> {
    const tail = this.#joined(partial, answerIds);
    // Whole blocks per chunk, so the chunks chain exactly as the whole would.
    const span = Math.max(1, Math.floor(HASH_CHUNK_TOKENS / this.blockSize)) * this.blockSize;
    let keys = chain.hashes;
    for (let from = 0; from < tail.length; from += span) {
      if (from > 0) yield;
      keys = chain.extend(tail.subarray(from, Math.min(tail.length, from + span)));
    }
    return keys;
  }

  /** Closes the server tokenizer's connections, if any. */
  async close(): Promise<void> {
    this.#index.close();
    await this.server?.close();
  }
}
