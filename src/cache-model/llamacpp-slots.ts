import { PrefixTree, ROOT } from '../prefix-cache/prefix-tree.js';
import { LlamacppPromptCache } from './llamacpp-prompt-cache.js';
import type { Operation } from './operation-queue.js';

/*
 * What llama.cpp's llama-server reuses of each prompt, given its slots (docs/ENGINES.md): the expected-cache model
 * takes every finished request's prefix as reusable (one ideal cache), while the server reuses the tokens of the one
 * slot it picks, and restores from its host-memory prompt cache only in some cases. This follows those rules, from
 * llama.cpp's tools/server/server-context.cpp (get_available_slot, process_single_task) and server-task.cpp
 * (server_prompt_cache: alloc, load; llamacpp-prompt-cache.ts), so that a miss they cause is told apart (misses.ts:
 * slot_choice):
 * - A request takes an idle slot on arrival, else waits (deferred, in order) until a slot is released.
 * - Slot choice: among idle slots holding tokens, the one whose longest common prefix (LCP) with the prompt is the
 *   largest share of the prompt, above --slot-prompt-similarity (0.1); else the least recently released one
 *   (`t_last_used <= t_last`: among equals, the last).
 * - Only when the slot was chosen by LRU, or would keep under half its tokens (f_keep < 0.5), are its tokens saved to
 *   the prompt cache (alloc: not when an entry holds them all; entries they hold all of are dropped) and the entry that
 *   beats the slot on both f_keep and the share of the prompt (f_keep >= 0.25) restored into it, leaving the cache.
 *   A slot that keeps half its tokens is reused as it is, even where the cache holds far more of the prompt.
 * - With --cache-idle-slots (on by default) each idle slot is saved as a task starts, and with a unified KV cache
 *   cleared too.
 * - The hit is the LCP of the slot's tokens and the prompt, one token short of a whole prompt.
 * - A released slot holds its prompt and answer (the tokens the model registers at the request's end).
 * Not known to the client: the KV layout (both are followed, LlamacppSlotModels); taken at llama.cpp's defaults: the
 * similarity threshold, --cache-idle-slots, and the prompt cache's bound (--cache-ram 8192 MiB: bytes, which depend
 * on the model): the cache here keeps every entry.
 * Sequences are PrefixTree nodes, so a comparison costs O(log length), never a walk of the tokens.
 */

/** What the model keeps of a request on a slot's side: its figures, one per KV layout (see LlamacppSlotModels). */
export interface SlotTicket {
  /** The tokens the server would reuse from the slot it got (set when the request gets one), slots with their own KV. */
  slotHit: number | undefined;
  /** The same with a unified KV cache, whose idle slots are saved and cleared as each task starts. */
  slotHitUnified: number | undefined;
}

interface Slot {
  /** Its tokens: a PrefixTree node (ROOT: none). */
  node: number;
  /** Release order; -1 before its first. */
  tLast: number;
  busy: boolean;
}

interface Task {
  ticket: SlotTicket;
  keys: readonly number[];
  known: number;
  promptLength: number;
  slot: Slot | undefined;
}

/**
 * The server's layout is not stated by any endpoint: slots with their own KV (an explicit -np) keep their tokens when
 * idle, while a unified KV cache (`--kv-unified`, llama-server's default when -np is not given) saves each idle slot to
 * the prompt cache and clears it as a task starts, so every request then restores from the cache. Both are followed,
 * and the one whose figures the server's cached counts have matched more often so far explains a miss.
 */
export class LlamacppSlotModels {
  readonly #tree = new PrefixTree();
  readonly #own: LlamacppSlots;
  readonly #unified: LlamacppSlots;
  /** The prompt's leading blocks registered before, by request: where its end's registration starts. */
  readonly #known = new Map<SlotTicket, number>();
  readonly #choice = new SlotLayoutChoice();
  constructor(slots: number, blockSize: number, options: { similarity?: number } = {}) {
    const similarity = options.similarity ?? 0.1;
    this.#own = new LlamacppSlots(this.#tree, slots, blockSize, false, similarity);
    this.#unified = new LlamacppSlots(this.#tree, slots, blockSize, true, similarity);
  }

  /**
   * A request arrives with its prompt's block hashes `keys` (the first `known` registered before) and its length in
   * tokens: it takes a slot now, or waits for one.
   */
  *arriveSteps(ticket: SlotTicket, keys: readonly number[], known: number, promptLength: number): Operation {
    this.#known.set(ticket, known);
    yield* this.#own.arriveSteps(ticket, keys, known, promptLength);
    yield* this.#unified.arriveSteps(ticket, keys, known, promptLength);
  }

  /**
   * The request ended: its slot keeps `keys[0..totalBlocks)` (its prompt and answer; undefined when unknown). Returns
   * the requests that waited and got a slot now (their figures are set).
   */
  *endSteps(ticket: SlotTicket, keys: readonly number[] | undefined, totalBlocks: number): Generator<void, SlotTicket[], void> {
    const known = this.#known.get(ticket);
    if (known === undefined) return [];
    this.#known.delete(ticket);
    const node = keys === undefined ? undefined : this.#tree.extend(keys, known, totalBlocks);
    // Both layouts have as many slots, so the same requests wait and get a slot at the same ends.
    const placed = yield* this.#own.endSteps(ticket, node);
    yield* this.#unified.endSteps(ticket, node);
    return placed;
  }

  /** Whether the request waits for a slot (both layouts have as many slots: it waits in both or in neither). */
  waiting(ticket: SlotTicket): boolean {
    return this.#known.has(ticket) && ticket.slotHit === undefined;
  }

  /** The server cached `cached` tokens of the ticket's prompt: its figure for the misses, from the better layout. */
  slotHit(ticket: SlotTicket, cached: number): number | undefined {
    return this.#choice.slotHit(ticket, cached);
  }
}

/** Which KV layout the server runs, by evidence: the one whose figures its cached counts matched more often. */
export class SlotLayoutChoice {
  #matchedOwn = 0;
  #matchedUnified = 0;

  /** The server cached `cached` tokens of the ticket's prompt: its figure for the misses, from the better layout. */
  slotHit(ticket: SlotTicket, cached: number): number | undefined {
    if (ticket.slotHit === cached) this.#matchedOwn++;
    if (ticket.slotHitUnified === cached) this.#matchedUnified++;
    return this.#matchedUnified > this.#matchedOwn ? ticket.slotHitUnified : ticket.slotHit;
  }
}

/** One layout's slots and host-memory prompt cache, over the tree's sequences (see the comment at the top). */
class LlamacppSlots {
  readonly #tree: PrefixTree;
  readonly #slots: Slot[];
  readonly #blockSize: number;
  readonly #unified: boolean;
  readonly #similarity: number;
  readonly #cache: LlamacppPromptCache;
  /** Requests waiting for a slot, in arrival order. */
  readonly #deferred: Task[] = [];
  readonly #tasks = new Map<SlotTicket, Task>();
  #clock = 0;

  constructor(tree: PrefixTree, slots: number, blockSize: number, unified: boolean, similarity: number) {
    this.#tree = tree;
    this.#slots = Array.from({ length: slots }, () => ({ node: ROOT, tLast: -1, busy: false }));
    this.#cache = new LlamacppPromptCache(tree, blockSize);
    this.#blockSize = blockSize;
    this.#unified = unified;
    // llama.cpp's floats: 0.1f, not the double 0.1, for a share of exactly a tenth.
    this.#similarity = Math.fround(similarity);
  }

  *arriveSteps(ticket: SlotTicket, keys: readonly number[], known: number, promptLength: number): Operation {
    const task: Task = { ticket, keys, known, promptLength, slot: undefined };
    this.#tasks.set(ticket, task);
    if (this.#deferred.length > 0 || !(yield* this.#launchSteps(task))) this.#deferred.push(task);
  }

  /**
   * The request ended; its slot keeps the sequence `node` (undefined: what the tree holds of its prompt). Returns the
   * requests that waited and got a slot now.
   */
  *endSteps(ticket: SlotTicket, node: number | undefined): Generator<void, SlotTicket[], void> {
    const placed: SlotTicket[] = [];
    const task = this.#tasks.get(ticket);
    if (task === undefined) return placed;
    this.#tasks.delete(ticket);
    const slot = task.slot;
    if (slot === undefined) {
      // It ended before the model gave it a slot (the server released one before the client saw that end).
      const at = this.#deferred.indexOf(task);
      if (at >= 0) this.#deferred.splice(at, 1);
      return placed;
    }
    slot.node = node ?? this.#tree.deepest(task.keys, task.known, task.keys.length);
    slot.busy = false;
    slot.tLast = ++this.#clock;
    while (this.#deferred.length > 0 && (yield* this.#launchSteps(this.#deferred[0]!))) placed.push(this.#deferred.shift()!.ticket);
    return placed;
  }

  /** process_single_task with get_available_slot: false when no slot is idle. */
  *#launchSteps(task: Task): Generator<void, boolean, void> {
    const prompt = this.#tree.deepest(task.keys, task.known, task.keys.length);
    const chosen = this.#choose(prompt, task.promptLength);
    if (chosen === undefined) return false;
    const { slot, updateCache } = chosen;
    if (updateCache) {
      this.#cache.save(slot.node);
      slot.node = (yield* this.#cache.restoreSteps(slot.node, prompt, task.promptLength)) ?? slot.node;
    }
    slot.busy = true;
    task.slot = slot;
    const lcp = slot.node === ROOT ? 0 : this.#tree.commonPrefix(slot.node, prompt) * this.#blockSize;
    // A whole prompt found re-evaluates its last token (its logits give the first output token).
    const hit = Math.min(lcp, Math.max(0, task.promptLength - 1));
    if (this.#unified) task.ticket.slotHitUnified = hit;
    else task.ticket.slotHit = hit;
    for (const idle of this.#slots) {
      if (idle.busy) continue;
      this.#cache.save(idle.node);
      // [TAG_IDLE_SLOT_CLEAR]: a unified KV cache frees the idle slot's room.
      if (this.#unified) idle.node = ROOT;
    }
    return true;
  }
  /** get_available_slot: the idle slot by prompt similarity, else by LRU; whether the prompt cache is updated. */
  #choose(prompt: number, promptLength: number): { slot: Slot; updateCache: boolean } | undefined {
    const tree = this.#tree;
    let best = 0;
    let chosen: Slot | undefined;
    if (this.#similarity !== 0) {
      for (const slot of this.#slots) {
        if (slot.busy || slot.node === ROOT) continue;
        // llama.cpp's floats (single precision), which tip a share on a boundary (f_keep of exactly a half) otherwise.
        const sim = Math.fround((tree.commonPrefix(slot.node, prompt) * this.#blockSize) / promptLength);
        if (sim > best && sim > this.#similarity) {
          best = sim;
          chosen = slot;
        }
      }
      if (chosen !== undefined) return { slot: chosen, updateCache: Math.fround(Math.fround(best * promptLength) / (tree.depth(chosen.node) * this.#blockSize)) < 0.5 };
    }
    let tLast = -1;
    for (const slot of this.#slots) {
      if (slot.busy) continue;
      if (chosen === undefined || slot.tLast <= tLast) {
        tLast = slot.tLast;
        chosen = slot;
      }
    }
    return chosen === undefined ? undefined : { slot: chosen, updateCache: true };
  }
}
