import { ROOT, type PrefixTree } from './prefix-tree.js';

/*
 * A set of a PrefixTree's sequences (its nodes) that answers, for any sequence, how many members extend it and which
 * members it extends, in steps of the members' branch points rather than of blocks: llama.cpp's prompt cache
 * (cache-model/llamacpp-prompt-cache.ts) asks both at each save and restore, and its blocks are tokens, so a walk along
 * a sequence's path cost each request its whole history (issue #33's rule: a request's work is linear in what is new).
 *
 * Hand-written on purpose (nothing on npm keeps a compressed tree over another tree's nodes): the members and the
 * branch points between them form a compressed tree (a radix tree's shape, as SGLang's RadixCache: one node per
 * branch, not per token) whose nodes are tree nodes. Each keeps its parent, its children by the tree node one block
 * below it on their path, and the members in its subtree. Finding where a sequence sits takes one step per compressed
 * node on its path, each an O(log depth) ancestor query of the PrefixTree; a conversation's path has a few (the
 * shared system prompt's branch, the conversation's own).
 */
export class SequenceSet {
  readonly #tree: PrefixTree;
  /** The compressed tree: each node's parent (ROOT's: none), children by their first node below it, member count. */
  readonly #parent = new Map<number, number>();
  readonly #children = new Map<number, Map<number, number>>();
  readonly #count = new Map<number, number>([[ROOT, 0]]);
  readonly #members = new Set<number>();

  constructor(tree: PrefixTree) {
    this.#tree = tree;
  }

  /** Members. */
  get size(): number {
    return this.#members.size;
  }

  /** Nodes of the compressed tree, ROOT included: members and branch points, under twice the members plus two. */
  get compressedNodes(): number {
    return this.#count.size;
  }

  has(node: number): boolean {
    return this.#members.has(node);
  }

  /** How many members extend `node`'s sequence (it included): those in its subtree. */
  countBelow(node: number): number {
    const top = this.#topBelow(node);
    return top === undefined ? 0 : this.#count.get(top)!;
  }

  /** The members in `node`'s subtree (it included), at most `limit` of them. */
  below(node: number, limit = Infinity): number[] {
    const found: number[] = [];
    const top = this.#topBelow(node);
    const stack = top === undefined ? [] : [top];
    while (stack.length > 0 && found.length < limit) {
      const at = stack.pop()!;
      if (this.#members.has(at)) found.push(at);
      const children = this.#children.get(at);
      if (children !== undefined) for (const child of children.values()) stack.push(child);
    }
    return found;
  }

  /** The members that are proper prefixes of `node`'s sequence (its ancestors), nearest the root first. */
  prefixesOf(node: number): number[] {
    const found: number[] = [];
    this.#descend(node, (at) => {
      if (at !== node && this.#members.has(at)) found.push(at);
    });
    return found;
  }

  /** Adds `node` (ROOT, the empty sequence, is never a member). */
  add(node: number): void {
    if (node === ROOT || this.#members.has(node)) return;
    const tree = this.#tree;
    const { at, next } = this.#descend(node);
    if (at !== node) {
      const depth = tree.depth(at);
      const key = tree.ancestorAt(node, depth + 1);
      if (next === undefined) this.#attach(node, at, key, 0);
      else {
        // `next` leaves `at` on node's path but is not its ancestor: node lies on that edge, or the two part below `at`.
        const shared = tree.commonPrefix(next, node);
        const split = shared === tree.depth(node) ? node : tree.ancestorAt(node, shared);
        this.#attach(split, at, key, this.#count.get(next)!);
        this.#link(next, split);
        if (split !== node) this.#attach(node, split, tree.ancestorAt(node, shared + 1), 0);
      }
    }
    this.#members.add(node);
    for (let a: number | undefined = node; a !== undefined; a = this.#parent.get(a)) this.#count.set(a, this.#count.get(a)! + 1);
  }

  /** Removes `node`, and the branch points that no longer part two members' paths. */
  delete(node: number): void {
    if (!this.#members.delete(node)) return;
    for (let a: number | undefined = node; a !== undefined; a = this.#parent.get(a)) this.#count.set(a, this.#count.get(a)! - 1);
    this.#prune(node);
  }

  /** Takes `node` out of the compressed tree when it is neither a member nor a branch point, then its parent likewise. */
  #prune(node: number): void {
    if (node === ROOT || this.#members.has(node)) return;
    const children = this.#children.get(node);
    const parent = this.#parent.get(node)!;
    if (children !== undefined && children.size > 1) return;
    const key = this.#tree.ancestorAt(node, this.#tree.depth(parent) + 1);
    const only = children?.values().next().value;
    if (only === undefined) this.#children.get(parent)!.delete(key);
    else {
      this.#children.get(parent)!.set(key, only);
      this.#parent.set(only, parent);
    }
    this.#parent.delete(node);
    this.#children.delete(node);
    this.#count.delete(node);
    if (only === undefined) this.#prune(parent);
  }

  /** Makes `node` a compressed node, a child of `parent` under `key` (its first node below `parent`), with `count`. */
  #attach(node: number, parent: number, key: number, count: number): void {
    let children = this.#children.get(parent);
    if (children === undefined) this.#children.set(parent, (children = new Map()));
    children.set(key, node);
    this.#parent.set(node, parent);
    this.#count.set(node, count);
  }

  /** Moves compressed node `node` under `parent`, an ancestor of it. */
  #link(node: number, parent: number): void {
    this.#attach(node, parent, this.#tree.ancestorAt(node, this.#tree.depth(parent) + 1), this.#count.get(node)!);
  }

  /** The highest compressed node in `node`'s subtree (it included), or undefined when it has none. */
  #topBelow(node: number): number | undefined {
    const { at, next } = this.#descend(node);
    if (at === node) return at;
    if (next === undefined) return undefined;
    const tree = this.#tree;
    return tree.depth(next) > tree.depth(node) && tree.ancestorAt(next, tree.depth(node)) === node ? next : undefined;
  }

  /**
   * Walks the compressed tree down `node`'s path: `at`, the deepest compressed node that is `node` or its ancestor, and
   * `next`, its child toward `node` that is not (it parts from the path or lies below `node`), if any. `visit` sees each
   * compressed ancestor-or-self of `node` on the way, ROOT first.
   */
  #descend(node: number, visit?: (at: number) => void): { at: number; next: number | undefined } {
    const tree = this.#tree;
    const depth = tree.depth(node);
    let at = ROOT;
    for (;;) {
      visit?.(at);
      if (at === node) return { at, next: undefined };
      const next = this.#children.get(at)?.get(tree.ancestorAt(node, tree.depth(at) + 1));
      if (next === undefined) return { at, next };
      if (tree.depth(next) > depth || tree.ancestorAt(node, tree.depth(next)) !== next) return { at, next };
      at = next;
    }
  }
}
