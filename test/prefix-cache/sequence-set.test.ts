import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PrefixTree, ROOT } from '../../src/prefix-cache/prefix-tree.js';
import { SequenceSet } from '../../src/prefix-cache/sequence-set.js';
import { Rng } from '../../src/util/rng.js';

// SequenceSet (src/prefix-cache/sequence-set.ts) against the definition it answers by walking nothing: a member
// extends a sequence when the sequence is its ancestor-or-self in the tree, read here from each member's own path
// (its parents one by one), so the compressed tree's splits and merges are checked through many adds and deletes.

/** The members of `members` in `node`'s subtree, and the ones that are proper prefixes of it, by walking parents. */
function expected(tree: PrefixTree, members: ReadonlySet<number>, node: number): { below: number[]; prefixes: number[] } {
  const below: number[] = [];
  for (const m of members) {
    let a = m;
    while (tree.depth(a) > tree.depth(node)) a = tree.parent(a);
    if (a === node) below.push(m);
  }
  const prefixes: number[] = [];
  for (let a = tree.parent(node); a !== ROOT; a = tree.parent(a)) if (members.has(a)) prefixes.unshift(a);
  if (node === ROOT) prefixes.length = 0;
  return { below: below.sort((x, y) => x - y), prefixes };
}

/**
 * The compressed tree's size by its definition: ROOT, the members, and each other node where two members' paths part
 * (members below two or more of its children).
 */
function compressedSize(tree: PrefixTree, members: ReadonlySet<number>): number {
  const partings = new Map<number, Set<number>>();
  for (const m of members) {
    for (let child = m, a = tree.parent(m); child !== ROOT; child = a, a = tree.parent(a)) {
      let children = partings.get(a);
      if (children === undefined) partings.set(a, (children = new Set()));
      children.add(child);
    }
  }
  let branches = 0;
  for (const [node, children] of partings) if (node !== ROOT && !members.has(node) && children.size >= 2) branches++;
  return 1 + members.size + branches;
}

/** A tree of sequences that share prefixes and part at random places (a system prompt, conversations, forks). */
function randomTree(random: Rng, sequences: number): { tree: PrefixTree; nodes: number[] } {
  const tree = new PrefixTree();
  const paths: number[][] = [];
  let nextKey = 1;
  for (let s = 0; s < sequences; s++) {
    const base = paths.length === 0 ? [] : paths[random.int(0, paths.length - 1)]!;
    const keys = base.slice(0, random.int(0, base.length));
    for (let n = random.int(1, 12); n > 0; n--) keys.push(nextKey++);
    tree.extend(keys, 0, keys.length);
    paths.push(keys);
  }
  const nodes = new Set<number>([ROOT]);
  for (const keys of paths) for (let d = 1; d <= keys.length; d++) nodes.add(tree.deepest(keys, 0, d));
  return { tree, nodes: [...nodes] };
}

describe('SequenceSet', () => {
  test('answers as the walk of every member path does, through adds and deletes that split and merge branches', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = new Rng(seed);
      const { tree, nodes } = randomTree(random, 40);
      const set = new SequenceSet(tree);
      const members = new Set<number>();
      for (let op = 0; op < 1500; op++) {
        const node = nodes[random.int(0, nodes.length - 1)]!;
        if (random.next() < 0.55) {
          set.add(node);
          if (node !== ROOT) members.add(node);
        } else {
          set.delete(node);
          members.delete(node);
        }
        const probe = nodes[random.int(0, nodes.length - 1)]!;
        const want = expected(tree, members, probe);
        const where = `seed ${seed}, operation ${op}, node ${probe}`;
        assert.equal(set.size, members.size, where);
        // A branch point stays only while it parts two members' paths.
        assert.equal(set.compressedNodes, compressedSize(tree, members), `${where}: compressed nodes`);
        assert.equal(set.has(probe), members.has(probe), where);
        assert.equal(set.countBelow(probe), want.below.length, where);
        assert.deepEqual(set.below(probe).sort((x, y) => x - y), want.below, where);
        assert.deepEqual(set.prefixesOf(probe), want.prefixes, where);
      }
    }
  });

  test('below stops at its limit', () => {
    const tree = new PrefixTree();
    const set = new SequenceSet(tree);
    for (let c = 0; c < 10; c++) set.add(tree.extend([1, 2, 100 + c], 0, 3));
    assert.equal(set.countBelow(tree.deepest([1, 2], 0, 2)), 10);
    assert.equal(set.below(tree.deepest([1, 2], 0, 2), 3).length, 3);
  });
});
