import { ROOT, type PrefixTree } from '../prefix-cache/prefix-tree.js';
import { SequenceSet } from '../prefix-cache/sequence-set.js';

/*
 * llama.cpp's host-memory prompt cache (`server_prompt_cache` in tools/server/server-task.cpp), over PrefixTree
 * sequences, for llamacpp-slots.ts: entries oldest first; `alloc` skips a sequence an entry holds all of and drops the
 * entries it holds all of; `load` moves into a slot the entry that beats it on both the share it keeps (f_keep, at
 * least a quarter) and the share of the prompt (f_sim), scanning oldest first. Its bound (bytes) is not followed.
 *
 * The entries are a SequenceSet (prefix-cache/sequence-set.ts), which answers whether an entry holds a sequence and
 * which entries a sequence holds in steps of the entries' branch points, not of tokens: a save or a restore costs the
 * same however long the conversation's history (it walked every token of it before). A restore needs only the entries
 * that share more of the prompt than the slot does (the others cannot beat it), all below one node of the prompt's
 * path: their count is known, so when they are few (a conversation's own history) they are taken from the set, else
 * found by comparing entries from the newest back until all are seen; then llama.cpp's oldest-first rule runs over them.
 */

/** Entries compared between two chances to let the loop go (~0.2 ms). */
const SCAN_STEP = 256;
/** Candidates taken from the set's subtree when there are at most this many, else found from the newest entry back. */
const FEW = 8;

export class LlamacppPromptCache {
  readonly #tree: PrefixTree;
  readonly #blockSize: number;
  readonly #set: SequenceSet;
  /** Each entry's place in the order they came (llama.cpp scans oldest first). */
  readonly #order = new Map<number, number>();
  #saved = 0;
  /** The entries as a list from the newest back (ROOT: none), so that a removal costs no search. */
  #newestEntry = ROOT;
  readonly #older = new Map<number, number>();
  readonly #newer = new Map<number, number>();

  constructor(tree: PrefixTree, blockSize: number) {
    this.#tree = tree;
    this.#blockSize = blockSize;
    this.#set = new SequenceSet(tree);
  }

  /** alloc: `node`'s sequence becomes the newest entry, unless an entry holds all of it. */
  save(node: number): void {
    if (node === ROOT || this.#set.countBelow(node) > 0) return;
    // The entries on its path are prefixes of it: they leave.
    for (const prefix of this.#set.prefixesOf(node)) this.#remove(prefix);
    this.#set.add(node);
    this.#order.set(node, this.#saved++);
    this.#older.set(node, this.#newestEntry);
    if (this.#newestEntry !== ROOT) this.#newer.set(this.#newestEntry, node);
    this.#newestEntry = node;
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
    const candidates = this.#set.countBelow(top);
    if (candidates === 0) return undefined;
    const found = candidates <= FEW ? this.#set.below(top) : yield* this.#newest(prompt, base, candidates);
    // llama.cpp's order, oldest first; its floats (single precision).
    found.sort((a, b) => this.#order.get(a)! - this.#order.get(b)!);
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

  /** The `count` entries that share more than `base` blocks with `prompt`, from the newest back. */
  *#newest(prompt: number, base: number, count: number): Generator<void, number[], void> {
    const tree = this.#tree;
    const found: number[] = [];
    for (let entry = this.#newestEntry, step = 0; entry !== ROOT && found.length < count; entry = this.#older.get(entry)!) {
      if (++step % SCAN_STEP === 0) yield;
      if (tree.commonPrefix(entry, prompt) > base) found.push(entry);
    }
    return found;
  }

  #remove(entry: number): void {
    this.#set.delete(entry);
    this.#order.delete(entry);
    const older = this.#older.get(entry)!;
    const newer = this.#newer.get(entry);
    if (newer === undefined) this.#newestEntry = older;
    else this.#older.set(newer, older);
    if (older !== ROOT) {
      if (newer === undefined) this.#newer.delete(older);
      else this.#newer.set(older, newer);
    }
    this.#older.delete(entry);
    this.#newer.delete(entry);
  }
}
