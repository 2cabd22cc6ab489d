import { BlockHashChain } from '../prefix-cache/block-hash.js';
import { BlockPool, type BlockLease } from '../prefix-cache/block-pool.js';
import type { ChatMessage, TokenCounter } from '../tokenizer/index.js';
import { letLoopGo } from '../tokenizer/sliced.js';
import { PromptIds, restartMarkers } from './prompt-ids.js';

/*
 * The global expected-cache model (issue #13): one block index of every token sequence the server has seen in this
 * run (each prompt as the chat template renders it, then each answer as it came back), shared by all conversations.
 * A request's expected cached tokens are the longest block-aligned prefix of its prompt already in the index, capped
 * as vLLM caps a hit (at least the last prompt token is computed). Two indexes run side by side: one never evicts
 * (the infinite model), one with --kv-cache-tokens evicts LRU as a server's block pool does; the main figure is the
 * finite one when a capacity is given. Per request: the new text of the turn is rendered, encoded and hashed, nothing
 * more, with a message-by-message template such as ChatML (a Jinja template is rendered whole: see prompt-ids.ts).
 */

/**
 * Requests whose first tokens come within this many ms of each other are taken as prefilled in the same engine step
 * (one batch), which does not hit its own blocks. Engine steps last a few ms or more; the client sees one step's
 * first tokens within well under a millisecond of each other on loopback.
 */
export const SAME_STEP_MS = 2;

/** Tokens hashed between yields to the event loop (a few ms of work at most). */
const HASH_CHUNK_TOKENS = 256 * 1024;

/** What the model needs, fixed for the run. */
export interface ExpectedCacheConfig {
  /** Tokens per KV block (--cache-block-size). */
  blockSize: number;
  /** KV capacity in blocks (--kv-cache-tokens / block size); undefined for the infinite model only. */
  capacityBlocks?: number;
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
  readonly leases: Array<{ pool: BlockPool; lease: BlockLease<number> }>;
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
  readonly #infinite = new BlockPool<number>();
  readonly #finite: BlockPool<number> | undefined;
  readonly #states = new WeakMap<object, ConversationState>();
  /** Requests prefilled whose prompt blocks are not visible yet, oldest first (see prefilled). */
  readonly #pending: Array<{ ticket: ExpectedCacheTicket; atMs: number; hashes: readonly number[] }> = [];

  constructor(counter: TokenCounter, config: ExpectedCacheConfig) {
    this.#counter = counter;
    this.blockSize = config.blockSize;
    this.capacityBlocks = config.capacityBlocks;
    this.#finite = config.capacityBlocks === undefined ? undefined : new BlockPool<number>(config.capacityBlocks);
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
   * allocates them while the answer streams, evicting as it goes, before the answer's end is seen here.
   */
  async begin(conversation: object, messages: readonly ChatMessage[], maxTokens?: number): Promise<ExpectedCacheTicket> {
    let state = this.#states.get(conversation);
    if (state === undefined) {
      state = { ids: new PromptIds(this.#counter.tokenizer, this.#markers), chain: new BlockHashChain(this.blockSize), last: new Uint32Array(0), lastLength: 0, registered: 0, known: 0 };
      this.#states.set(conversation, state);
    }
    const template = this.#counter.template;
    const update = template.incremental !== undefined ? await state.ids.updateMessages(messages, template.incremental) : await state.ids.update(template.apply(messages, { addGenerationPrompt: true }));
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
    return { hit: { expected: 0, infinite: 0 }, conversation, promptLength: update.length, totalBlocks, leases: [] };
  }

  /**
   * The server computed the ticket's prompt: its first token came at `atMs` (performance.now()). The prompt is looked
   * up in the indexes now rather than at the send, because a server looks a prompt up when it admits it, after any
   * queueing: a request that waited behind another with the same prefix hits it. Its own blocks become visible to
   * others SAME_STEP_MS later: requests whose first token comes in the same engine step were prefilled in the same
   * batch, and a batch does not hit its own blocks.
   */
  prefilled(ticket: ExpectedCacheTicket, atMs = performance.now()): void {
    if (ticket.leases.length > 0) return;
    this.#publish(atMs - SAME_STEP_MS);
    const state = this.#states.get(ticket.conversation);
    if (state === undefined || state.lastLength !== ticket.promptLength) return;
    const bs = this.blockSize;
    // vLLM computes at least the prompt's last token (its logits give the first output token): a hit stops before it.
    const maxHit = Math.floor(Math.max(0, ticket.promptLength - 1) / bs);
    const admit = (pool: BlockPool): number => {
      const { lease, hitBlocks } = pool.admit(state.chain.hashes, ticket.totalBlocks, maxHit, false, pool === this.#infinite ? state.known : 0);
      ticket.leases.push({ pool, lease });
      return hitBlocks * bs;
    };
    ticket.hit.infinite = admit(this.#infinite);
    ticket.hit.expected = this.#finite === undefined ? ticket.hit.infinite : admit(this.#finite);
    this.#pending.push({ ticket, atMs, hashes: state.chain.hashes });
  }

  /** Registers the prompt blocks of requests prefilled at or before `untilMs`, in the order they were. */
  #publish(untilMs: number): void {
    let i = 0;
    for (; i < this.#pending.length && this.#pending[i]!.atMs <= untilMs; i++) {
      const { ticket, hashes } = this.#pending[i]!;
      for (const { pool, lease } of ticket.leases) if (lease.heldBlocks > 0) pool.grow(lease, hashes, lease.heldBlocks);
    }
    if (i > 0) this.#pending.splice(0, i);
  }

  /**
   * The request ended. `answerIds`: the tokens the server generated and so cached after the prompt (the answer as
   * it came back, encoded), or undefined when it failed or they are unknown; then only the prompt stays cached.
   */
  end(ticket: ExpectedCacheTicket, answerIds: readonly number[] | undefined): void {
    const nowMs = performance.now();
    this.prefilled(ticket, nowMs); // no first token (not streamed, or failed): looked up now
    this.#publish(nowMs - SAME_STEP_MS);
    const bs = this.blockSize;
    let keys: readonly number[] | undefined;
    let totalBlocks = 0;
    const state = this.#states.get(ticket.conversation);
    if (answerIds !== undefined && answerIds.length > 0 && state !== undefined && state.lastLength === ticket.promptLength) {
      const head = state.chain.hashes.length * bs;
      // The prompt's partial tail block, then the answer: hashed on from the prompt's last full block.
      keys = state.chain.extend([...state.last.subarray(head, ticket.promptLength), ...answerIds]);
      // The last generated token's KV is never computed: the blocks through the one before it are held.
      totalBlocks = Math.ceil((ticket.promptLength + answerIds.length - 1) / bs);
    }
    keys ??= state !== undefined && state.lastLength === ticket.promptLength ? state.chain.hashes : undefined;
    for (const { pool, lease } of ticket.leases) {
      if (keys !== undefined) pool.grow(lease, keys, Math.max(totalBlocks, lease.heldBlocks));
      pool.release(lease);
    }
    // Every full block of the prompt (and answer) is in the infinite index now.
    if (state !== undefined && state.lastLength === ticket.promptLength && keys !== undefined) state.registered = Math.min(keys.length, Math.max(totalBlocks, ticket.totalBlocks));
  }
}
