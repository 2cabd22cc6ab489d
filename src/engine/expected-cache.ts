import { BlockHashChain } from '../prefix-cache/block-hash.js';
import { BlockPool, DEFAULT_STEP_BLOCKS, isSteps, type BlockLease } from '../prefix-cache/block-pool.js';
import type { ChatMessage, TokenCounter } from '../tokenizer/index.js';
import { withToolsTurn } from '../tokenizer/tools-prompt.js';
import { letLoopGo } from '../tokenizer/loop-turns.js';
import { PromptIds, restartMarkers } from './prompt-ids.js';

/*
 * The global expected-cache model (issue #13): one block index of every token sequence the server has seen in this
 * run (each prompt as the chat template renders it, then each answer as it came back), shared by all conversations.
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
 */

/**
 * Requests whose first tokens come within this many ms of each other are taken as prefilled in the same engine step
 * (one batch), which does not hit its own blocks. Engine steps last a few ms or more; the client sees one step's
 * first tokens within well under a millisecond of each other on loopback.
 */
export const SAME_STEP_MS = 2;

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
  /** Blocks an index handles between two chances to let the loop go (BlockPool's stepBlocks); tests set it small. */
  stepBlocks?: number;
  /** The longest the indexes' operations run before letting the loop go, in ms (default SLICE_MS); tests set 0. */
  sliceMs?: number;
}

/** The model's figures for one request, in tokens. */
export interface ExpectedHit {
  /** With the capacity model when there is one, else the infinite one. */
  expected: number;
  /** With no eviction. */
  infinite: number;
}

/** One request between its send and its end: the blocks it holds in each index. */
export interface ExpectedCacheTicket {
  readonly hit: ExpectedHit;
  readonly conversation: object;
  readonly promptLength: number;
  /** Blocks of the prompt and the output budget. */
  readonly totalBlocks: number;
  readonly leases: Array<{ pool: BlockPool; lease: BlockLease }>;
  /** Whether its lookup was asked for (by `prefilled`, or by `end` when no first token came). */
  lookupAsked: boolean;
  /** Resolves when its lookup has run, when it had to wait (see the comment at the top). */
  lookup: Promise<void> | undefined;
}

/** One of the indexes' operations waiting its turn, and how to settle its caller's promise. */
interface QueuedOperation {
  steps: Generator<void, void, void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const SETTLED = Promise.resolve();

/** Writes `head` then `tail` into `out` (their lengths long) and returns it. */
function joinedIds(out: Uint32Array, head: Uint32Array, tail: ArrayLike<number>): Uint32Array {
  out.set(head);
  out.set(tail, head.length);
  return out;
}

/** One conversation's state: its prompt ids and their block hashes (a partial tail block is rehashed when it fills). */
interface ConversationState {
  ids: PromptIds;
  chain: BlockHashChain;
  /** The last prompt's ids (a view) and length: the answer's blocks continue them. */
  last: Uint32Array;
  lastLength: number;
  /** Leading blocks of the chain registered in the infinite index (they stay there): not looked up again. */
  registered: number;
  /** The same, bounded by what the latest prompt left unchanged. */
  known: number;
}

/** The run's expected-cache model (one per engine: with --workers, one per worker thread; see docs/METRICS.md). */
export class ExpectedCache {
  readonly blockSize: number;
  readonly capacityBlocks: number | undefined;
  readonly #counter: TokenCounter;
  readonly #markers: RegExp | null;
  readonly #infinite: BlockPool<number>;
  readonly #finite: BlockPool<number> | undefined;
  readonly #states = new WeakMap<object, ConversationState>();
  /** Requests prefilled whose prompt blocks are not visible yet, oldest first (see prefilled). */
  readonly #pending: Array<{ ticket: ExpectedCacheTicket; atMs: number; hashes: readonly number[] }> = [];
  /** The indexes' operations in call order, the first one running (see the comment at the top). */
  readonly #queue: QueuedOperation[] = [];
  readonly #sliceMs: number;
  /** Scratch for #joined. */
  #scratch = new Uint32Array(1024);

  constructor(counter: TokenCounter, config: ExpectedCacheConfig) {
    this.#counter = counter;
    this.blockSize = config.blockSize;
    this.capacityBlocks = config.capacityBlocks;
    const stepBlocks = config.stepBlocks ?? DEFAULT_STEP_BLOCKS;
    this.#sliceMs = config.sliceMs ?? SLICE_MS;
    this.#infinite = new BlockPool<number>(Infinity, stepBlocks);
    this.#finite = config.capacityBlocks === undefined ? undefined : new BlockPool<number>(config.capacityBlocks, stepBlocks);
    this.#markers = restartMarkers(counter);
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
   * A request of `conversation` (any object that lives as long as the conversation) is sent with `messages`: its
   * prompt is encoded and hashed (its new tokens only). Call `prefilled` as its first token comes and `end` when it
   * ends. `maxTokens`: the request's output budget, when it has one; its blocks are taken at once, as a server
   * allocates them while the answer streams, evicting as it goes, before the answer's end is seen here. `tools`: the
   * request's tool definitions, rendered into its prompt.
   */
  async begin(conversation: object, messages: readonly ChatMessage[], maxTokens?: number, tools?: readonly unknown[]): Promise<ExpectedCacheTicket> {
    let state = this.#states.get(conversation);
    if (state === undefined) {
      state = { ids: new PromptIds(this.#counter.tokenizer, this.#markers), chain: new BlockHashChain(this.blockSize), last: new Uint32Array(0), lastLength: 0, registered: 0, known: 0 };
      this.#states.set(conversation, state);
    }
    const template = this.#counter.template;
    // The request's tool definitions are part of its prompt, as a server renders them (tokenizer/tools-prompt.ts).
    const update =
      template.incremental !== undefined
        ? await state.ids.updateMessages(withToolsTurn(messages, tools), template.incremental)
        : await state.ids.update(template.apply(messages, { addGenerationPrompt: true, tools }));
    // Hashed in chunks with the loop let go between them: a 10 MB message is ~156,000 blocks (issue #14).
    for (let from = update.unchanged; ; from += HASH_CHUNK_TOKENS) {
      state.chain.sync(update.ids, Math.min(update.length, from + HASH_CHUNK_TOKENS), from);
      if (from + HASH_CHUNK_TOKENS >= update.length) break;
      await letLoopGo();
    }
    state.known = Math.min(state.registered, Math.floor(update.unchanged / this.blockSize));
    state.registered = state.known;
    state.last = update.ids;
    state.lastLength = update.length;
    const totalBlocks = Math.ceil((update.length + Math.max(0, (maxTokens ?? 0) - 1)) / this.blockSize);
    return { hit: { expected: 0, infinite: 0 }, conversation, promptLength: update.length, totalBlocks, leases: [], lookupAsked: false, lookup: undefined };
  }

  /**
   * The server computed the ticket's prompt: its first token came at `atMs` (performance.now()). The prompt is looked
   * up in the indexes now rather than at the send, because a server looks a prompt up when it admits it, after any
   * queueing: a request that waited behind another with the same prefix hits it. Its own blocks become visible to
   * others SAME_STEP_MS later: requests whose first token comes in the same engine step were prefilled in the same
   * batch, and a batch does not hit its own blocks. The lookup may wait behind a large registration: read the
   * ticket's `hit` after `settled(ticket)`.
   */
  prefilled(ticket: ExpectedCacheTicket, atMs = performance.now()): void {
    if (ticket.lookupAsked) return;
    ticket.lookupAsked = true;
    const lookup = this.#run(this.#prefilledSteps(ticket, atMs));
    // Its failure (a bug) reaches whoever awaits settled(); unawaited, it must not end the process.
    lookup?.catch(() => {});
    ticket.lookup = lookup;
  }

  /** Resolves when the ticket's `hit` is final (at once unless its lookup waits behind a large registration). */
  settled(ticket: ExpectedCacheTicket): Promise<void> {
    return ticket.lookup ?? SETTLED;
  }

  *#prefilledSteps(ticket: ExpectedCacheTicket, atMs: number): Generator<void, void, void> {
    if (this.#due(atMs - SAME_STEP_MS)) yield* this.#publishSteps(atMs - SAME_STEP_MS);
    const state = this.#states.get(ticket.conversation);
    if (state === undefined || state.lastLength !== ticket.promptLength) return;
    const bs = this.blockSize;
    // vLLM computes at least the prompt's last token (its logits give the first output token): a hit stops before it.
    const maxHit = Math.floor(Math.max(0, ticket.promptLength - 1) / bs);
    const keys = state.chain.hashes;
    // Each pool in turn, written out rather than through a generator closure: one generator fewer per pool and request.
    const admitted = this.#infinite.admitStepwise(keys, ticket.totalBlocks, maxHit, false, state.known);
    const infinite = isSteps(admitted) ? yield* admitted : admitted;
    ticket.leases.push({ pool: this.#infinite, lease: infinite.lease });
    ticket.hit.infinite = infinite.hitBlocks * bs;
    if (this.#finite === undefined) ticket.hit.expected = ticket.hit.infinite;
    else {
      const admittedFinite = this.#finite.admitStepwise(keys, ticket.totalBlocks, maxHit, false, 0);
      const finite = isSteps(admittedFinite) ? yield* admittedFinite : admittedFinite;
      ticket.leases.push({ pool: this.#finite, lease: finite.lease });
      ticket.hit.expected = finite.hitBlocks * bs;
    }
    this.#pending.push({ ticket, atMs, hashes: keys });
  }

  /** Whether a request prefilled at or before `untilMs` waits to be published (checked before making the generator). */
  #due(untilMs: number): boolean {
    return this.#pending.length > 0 && this.#pending[0]!.atMs <= untilMs;
  }

  /** Registers the prompt blocks of requests prefilled at or before `untilMs`, in the order they were. */
  *#publishSteps(untilMs: number): Generator<void, void, void> {
    while (this.#due(untilMs)) {
      const { ticket, hashes } = this.#pending.shift()!;
      for (const { pool, lease } of ticket.leases) {
        const rest = lease.heldBlocks > 0 ? pool.growStepwise(lease, hashes, lease.heldBlocks) : undefined;
        if (rest !== undefined) yield* rest;
      }
    }
  }

  /**
   * The request ended. `answerIds`: the tokens the server generated and so cached after the prompt (the answer as
   * it came back, encoded), or undefined when it failed or they are unknown; then only the prompt stays cached.
   * Resolves when its blocks are released (at once unless it waits behind a large registration, or is one).
   */
  end(ticket: ExpectedCacheTicket, answerIds: ArrayLike<number> | undefined): Promise<void> {
    const nowMs = performance.now();
    // No first token (not streamed, or failed): looked up now.
    const lookUp = !ticket.lookupAsked;
    ticket.lookupAsked = true;
    const ended = this.#run(this.#endSteps(ticket, answerIds, nowMs, lookUp));
    if (lookUp) ticket.lookup = ended;
    return ended ?? SETTLED;
  }

  *#endSteps(ticket: ExpectedCacheTicket, answerIds: ArrayLike<number> | undefined, nowMs: number, lookUp: boolean): Generator<void, void, void> {
    if (lookUp) yield* this.#prefilledSteps(ticket, nowMs);
    if (this.#due(nowMs - SAME_STEP_MS)) yield* this.#publishSteps(nowMs - SAME_STEP_MS);
    const bs = this.blockSize;
    let keys: readonly number[] | undefined;
    let totalBlocks = 0;
    const state = this.#states.get(ticket.conversation);
    const current = state !== undefined && state.lastLength === ticket.promptLength;
    if (answerIds !== undefined && answerIds.length > 0 && current) {
      const head = state.chain.hashes.length * bs;
      // The prompt's partial tail block, then the answer: hashed on from the prompt's last full block (at once when
      // it is one chunk, as nearly every answer is: no generator).
      const partial = state.last.subarray(head, ticket.promptLength);
      keys =
        partial.length + answerIds.length <= HASH_CHUNK_TOKENS
          ? state.chain.extend(this.#joined(partial, answerIds))
          : yield* this.#extendSteps(state.chain, partial, answerIds);
      // The last generated token's KV is never computed: the blocks through the one before it are held.
      totalBlocks = Math.ceil((ticket.promptLength + answerIds.length - 1) / bs);
    }
    keys ??= current ? state.chain.hashes : undefined;
    for (const { pool, lease } of ticket.leases) {
      const grown = keys !== undefined ? pool.growStepwise(lease, keys, Math.max(totalBlocks, lease.heldBlocks)) : undefined;
      if (grown !== undefined) yield* grown;
      const released = pool.releaseStepwise(lease);
      if (released !== undefined) yield* released;
    }
    // Every full block of the prompt (and answer) is in the infinite index now.
    if (current && keys !== undefined) state.registered = Math.min(keys.length, Math.max(totalBlocks, ticket.totalBlocks));
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

  /**
   * Runs an operation on the indexes in call order: at once when none waits, for up to sliceMs, and the rest of it
   * (or all of it, behind others) between turns of the event loop. Returns undefined when it ran whole at once, else
   * a promise of its end. The sliceMs counts from before the first step: it runs in the caller's turn, beside the
   * response's own handling, and a first step of 1,024 blocks in code not yet optimized (a process's first large
   * message) took a millisecond or more on its own (bench/long-context.ts, `run`: the first large message's longest
   * step 4.4-6.1 ms, median 5.2, with the budget counted after the first step; 3.4-4.6, median 4.05, counted before).
   */
  #run(steps: Generator<void, void, void>): Promise<void> | undefined {
    if (this.#queue.length === 0) {
      const t0 = performance.now();
      do if (steps.next().done === true) return undefined;
      while (performance.now() - t0 < this.#sliceMs);
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ steps, resolve, reject });
      if (this.#queue.length === 1) void this.#drain();
    });
  }

  /** Runs the queued operations in order, sliceMs at a time with the loop let go between. */
  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      await letLoopGo();
      const t0 = performance.now();
      do {
        const head = this.#queue[0]!;
        let done: boolean;
        try {
          done = head.steps.next().done === true;
        } catch (error) {
          this.#queue.shift();
          head.reject(error);
          continue;
        }
        if (done) {
          this.#queue.shift();
          head.resolve();
        }
      } while (this.#queue.length > 0 && performance.now() - t0 < this.#sliceMs);
    }
  }
}
