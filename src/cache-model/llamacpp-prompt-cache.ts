import { ROOT, type PrefixTree } from '../prefix-cache/prefix-tree.js';

/*
 * llama.cpp's host-memory prompt cache (`server_prompt_cache` in tools/server/server-task.cpp), over PrefixTree
 * sequences, for llamacpp-slots.ts: entries oldest first; `alloc` skips a sequence an entry holds all of and drops the
 * entries it holds all of; `load` moves into a slot the entry that beats it on both the share it keeps (f_keep, at
 * least a quarter) and the share of the prompt (f_sim), scanning oldest first. Its bound (bytes) is not followed.
 *
 * Each node of the tree counts the entries in its subtree, so that whether an entry holds a sequence is one read, and
 * the entries a sequence holds are found on its own path: a save costs its sequence's depth, not a scan of the cache.
 * A restore needs only the entries that share more of the prompt than the slot does (the others cannot beat it), all
 * below one node of the prompt's path: their count is known, so when they are few (a conversation's own history) they
 * are found by walking down from that node, else by comparing entries from the newest back until all are seen; then
 * llama.cpp's oldest-first rule runs over them.
 */

/** Entries compared, or nodes walked, between two chances to let the loop go (~0.2 ms). */
const SCAN_STEP = 256;
/**
 * Candidates found by walking down the tree when there are at most this many (each walk costs its path, a few
 * thousand nodes at most in a turn's history), else by comparing the entries from the newest back.
 */
const FEW = 8;

export class LlamacppPromptCache {
  readonly #tree: PrefixTree;
  readonly #blockSize: number;
  /** Entries (nodes), oldest first. */
  readonly #entries: number[] = [];
  /** Entries in each node's subtree, itself included, by node; and whether the node is one. */
  #below = new Int32Array(1024);
  #entry = new Uint8Array(1024);
  /** Each entry's place in the order they came (llama.cpp scans oldest first). */
  #order = new Float64Array(1024);
  #saved = 0;

  constructor(tree: PrefixTree, blockSize: number) {
    this.#tree = tree;
    this.#blockSize = blockSize;
  }

  /** alloc: `node`'s sequence becomes the newest entry, unless an entry holds all of it. */
  save(node: number): void {
    if (node === ROOT || this.#count(node) > 0) return;
    // The entries on its path are prefixes of it: they leave.
    const tree = this.#tree;
    this.#fit();
    for (let a = tree.parent(node); a !== ROOT; a = tree.parent(a)) if (this.#entry[a] === 1) this.#remove(a);
    this.#entries.push(node);
    this.#entry[node] = 1;
    this.#order[node] = this.#saved++;
    this.#add(node, 1);
  }

  /**
   * load for a slot holding `slot` (ROOT: empty) and a prompt whose stored part is `prompt`, `promptLength` tokens:
   * the entry restored (it leaves the cache), or undefined when none beats the slot.
   */
  *restoreSteps(slot: number, prompt: number, promptLength: number): Generator<void, number | undefined, void> {
    const tree = this.#tree;
    const bs = this.#blockSize;
    const base = slot === ROOT ? 0 : tree.commonPrefix(slot, prompt);
    if (base >= tree.depth(prompt)) return undefined;
    // Entries that share no more of the prompt than the slot have no better share of it: only those below `top` can win.
    const top = tree.ancestorAt(prompt, base + 1);
    const candidates = this.#count(top);
    if (candidates === 0) return undefined;
    const found = candidates <= FEW ? yield* this.#walkDown(top, candidates) : yield* this.#newest(prompt, base, candidates);
    // llama.cpp's order, oldest first; its floats (single precision).
    found.sort((a, b) => this.#order[a]! - this.#order[b]!);
    let keepBest = slot === ROOT ? -1 : Math.fround(base / tree.depth(slot));
    let simBest = Math.fround((base * bs) / promptLength);
    let best = ROOT;
    for (const entry of found) {
      const lcp = tree.commonPrefix(entry, prompt);
      const keep = Math.fround(lcp / tree.depth(entry));
      const sim = Math.fround((lcp * bs) / promptLength);
      // "don't trash large prompts"
      if (keep < 0.25) continue;
      if (keepBest < keep && simBest < sim) {
        keepBest = keep;
        simBest = sim;
        best = entry;
      }
    }
    if (best === ROOT) return undefined;
    this.#remove(best);
    return best;
  }

  /** The `count` entries in `top`'s subtree, walked down through the nodes that have some below them. */
  *#walkDown(top: number, count: number): Generator<void, number[], void> {
    const tree = this.#tree;
    const found: number[] = [];
    const stack = [top];
    for (let step = 0; stack.length > 0 && found.length < count; ) {
      const node = stack.pop()!;
      if (this.#entry[node] === 1) found.push(node);
      for (let c = tree.firstChild(node); c !== ROOT; c = tree.nextSibling(c)) {
        if (++step % SCAN_STEP === 0) yield;
        if (this.#count(c) > 0) stack.push(c);
      }
    }
    return found;
  }

  /** The `count` entries that share more than `base` blocks with `prompt`, from the newest back. */
  *#newest(prompt: number, base: number, count: number): Generator<void, number[], void> {
    const tree = this.#tree;
    const entries = this.#entries;
    const found: number[] = [];
    for (let i = entries.length - 1, step = 0; i >= 0 && found.length < count; i--) {
      if (++step % SCAN_STEP === 0) yield;
      if (tree.commonPrefix(entries[i]!, prompt) > base) found.push(entries[i]!);
    }
    return found;
  }

  /** Entries in `node`'s subtree. */
  #count(node: number): number {
    return node < this.#below.length ? this.#below[node]! : 0;
  }

  #remove(entry: number): void {
    const entries = this.#entries;
    entries.splice(entries.lastIndexOf(entry), 1);
    this.#entry[entry] = 0;
    this.#add(entry, -1);
  }

  /** Sizes the per-node arrays to every node of the tree so far. */
  #fit(): void {
    const limit = this.#tree.nodeLimit;
    if (limit <= this.#below.length) return;
    const below = new Int32Array(limit);
    below.set(this.#below);
    this.#below = below;
    const entry = new Uint8Array(limit);
    entry.set(this.#entry);
    this.#entry = entry;
    const order = new Float64Array(limit);
    order.set(this.#order);
    this.#order = order;
  }

  /** Adds `delta` to the counts of `node` and its ancestors (the arrays fit them: #fit ran since the node was made). */
  #add(node: number, delta: number): void {
    const tree = this.#tree;
    for (let a = node; ; a = tree.parent(a)) {
      this.#below[a]! += delta;
      if (a === ROOT) return;
    }
  }
}
