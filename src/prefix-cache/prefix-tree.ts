import { BlockIndex } from './block-index.js';

/*
 * Every sequence of chained block hashes registered so far, as a tree: a node is one block hash, its parent the hash
 * of the block before it (a chained hash names its whole prefix), so a sequence is its last block's node and two
 * sequences' longest common prefix is the depth of their lowest common ancestor. That makes the common prefix of a
 * prompt with a stored sequence a question of O(log depth) steps, with no copy of either, however long the history:
 * what llama.cpp's slots and prompt cache compare (cache-model/llamacpp-slots.ts) without walking their tokens.
 *
 * Hand-written on purpose: the ancestor steps use skew-binary jump pointers (E. W. Myers, "An applicative random-access
 * stack", 1983): each node keeps its parent and one jump, set once from its parent's in O(1), and any ancestor or
 * common ancestor is reached in O(log depth) of them. Binary lifting would need log(depth) words a node, and a token-
 * granular cache (llama.cpp's) has a node per token.
 */

/** The root: the empty sequence (depth 0), parent and jump of itself. */
export const ROOT = 0;

/** Doubles an Int32Array's length, keeping its contents. */
function grown(array: Int32Array<ArrayBuffer>, atLeast: number): Int32Array<ArrayBuffer> {
  let length = array.length;
  while (length <= atLeast) length *= 2;
  const next = new Int32Array(length);
  next.set(array);
  return next;
}

/** Sequences of chained block hashes, by the node of their last block (see the comment at the top). */
export class PrefixTree {
  /** Block hash -> entry id; the node is the entry id + 1 (ROOT is 0). */
  readonly #index = new BlockIndex({ shards: 16, tracked: false });
  #parent = new Int32Array(1024);
  #jump = new Int32Array(1024);
  #depth = new Int32Array(1024);

  /** The number of blocks of the sequence `node` ends. */
  depth(node: number): number {
    return this.#depth[node]!;
  }

  /** The node of the sequence one block shorter (ROOT's is ROOT). */
  parent(node: number): number {
    return this.#parent[node]!;
  }

  /**
   * The node of `keys[0..length)`, registering the blocks the tree lacks. `from`: leading blocks known to be registered
   * already (a conversation's history), not looked up again unless the block before `from` is missing.
   */
  extend(keys: ArrayLike<number>, from: number, length: number): number {
    let node = this.#startAt(keys, from, length);
    const index = this.#index;
    for (let i = this.#start; i < length; i++) {
      const key = keys[i]!;
      const id = index.add(key, 0);
      if (id < 0) {
        node = index.find(key) + 1;
        continue;
      }
      node = this.#link(id + 1, node);
    }
    return node;
  }

  /** The node of the longest leading part of `keys[0..length)` the tree holds; `from` as for extend. */
  deepest(keys: ArrayLike<number>, from: number, length: number): number {
    let node = this.#startAt(keys, from, length);
    for (let i = this.#start; i < length; i++) {
      const id = this.#index.find(keys[i]!);
      if (id < 0) break;
      node = id + 1;
    }
    return node;
  }

  /** Where extend and deepest start walking `keys` (set by #startAt, with the node of the blocks before it). */
  #start = 0;

  /**
   * The node of `keys[0..from)` when the tree holds its last block, with #start = from; else ROOT, with #start = 0 (a
   * `from` the caller took to be registered is not trusted when its block is missing).
   */
  #startAt(keys: ArrayLike<number>, from: number, length: number): number {
    this.#start = Math.min(from, length);
    if (this.#start === 0) return ROOT;
    const id = this.#index.find(keys[this.#start - 1]!);
    if (id >= 0) return id + 1;
    this.#start = 0;
    return ROOT;
  }

  /** The number of leading blocks the sequences `a` and `b` share: their lowest common ancestor's depth. */
  commonPrefix(a: number, b: number): number {
    const parent = this.#parent;
    const jump = this.#jump;
    const depth = this.#depth;
    if (depth[a]! < depth[b]!) [a, b] = [b, a];
    a = this.ancestorAt(a, depth[b]!);
    // At one depth the two paths' jumps land at one depth too: jump together while they land apart.
    while (a !== b) {
      if (jump[a] !== jump[b]) {
        a = jump[a]!;
        b = jump[b]!;
      } else {
        a = parent[a]!;
        b = parent[b]!;
      }
    }
    return depth[a]!;
  }

  /** The ancestor of `node` at depth `d` (at most its own): the sequence's first `d` blocks. */
  ancestorAt(node: number, d: number): number {
    const parent = this.#parent;
    const jump = this.#jump;
    const depth = this.#depth;
    while (depth[node]! > d) node = depth[jump[node]!]! >= d ? jump[node]! : parent[node]!;
    return node;
  }

  /** Makes `node` a child of `parent`; returns it. */
  #link(node: number, parent: number): number {
    if (node >= this.#parent.length) {
      this.#parent = grown(this.#parent, node);
      this.#jump = grown(this.#jump, node);
      this.#depth = grown(this.#depth, node);
    }
    const depth = this.#depth;
    const jump = this.#jump;
    const j = jump[parent]!;
    // Myers' rule: jump over two equal spans at once, else to the parent.
    jump[node] = depth[parent]! - depth[j]! === depth[j]! - depth[jump[j]!]! ? jump[j]! : parent;
    this.#parent[node] = parent;
    depth[node] = depth[parent]! + 1;
    return node;
  }
}
