/*
 * The chained block hash of a token sequence, after vLLM v1's prefix caching: a sequence is cut into blocks of
 * `blockSize` tokens, and each full block's hash is chained over its parent block's hash and its token ids, so one
 * hash names a whole prefix. The simulator's KV cache and chatload's expected-cache model both hash with this, so
 * the two index exactly the same blocks (a partial tail block is never cached, as in vLLM).
 */

/** Hash chain seed: the "parent" of a sequence's first block. */
export const ROOT_BLOCK_HASH = 0x2545f491;

/**
 * Hash of one full block: chained over `parentHash` and `ids[start, start + blockSize)`. Two 32-bit FNV-style
 * lanes folded into 53 bits, so it is an exact Map key; a collision needs ~2^26 live blocks to become likely.
 */
export function blockHash(parentHash: number, ids: ArrayLike<number>, start: number, blockSize: number): number {
  let a = (0x811c9dc5 ^ (parentHash >>> 0)) >>> 0;
  let b = (0x01000193 ^ Math.floor(parentHash / 0x100000000)) >>> 0;
  for (let i = start; i < start + blockSize; i++) {
    const id = ids[i]! >>> 0;
    a = Math.imul(a ^ id, 0x01000193);
    b = Math.imul(b ^ ((id << 7) | (id >>> 25)), 0x5bd1e995);
    b ^= b >>> 13;
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) >>> 11);
}

/**
 * The block hashes of one growing token sequence (a conversation's prompt), kept so that each turn hashes only its
 * new tokens: `sync(ids, length, unchanged)` keeps the hashes of the blocks wholly inside the first `unchanged`
 * tokens and hashes the rest up to `length`. Holds hashes (8 bytes a block), never text.
 */
export class BlockHashChain {
  readonly blockSize: number;
  readonly #hashes: number[] = [];

  constructor(blockSize: number) {
    this.blockSize = blockSize;
  }

  /** The hashes of the full blocks, first block first. */
  get hashes(): readonly number[] {
    return this.#hashes;
  }

  /**
   * Appends the hashes of the full blocks of `tail`, the tokens after the chain's full blocks (an answer after its
   * prompt, the prompt's partial block first). The next sync drops them again unless its tokens are unchanged there.
   */
  extend(tail: ArrayLike<number>): readonly number[] {
    return extendBlockHashes(this.#hashes, tail, this.blockSize);
  }

  /**
   * Brings the chain to the full blocks of `ids[0, length)`, given that the first `unchanged` tokens are the same as
   * at the last sync. Cost: the tokens after the last block boundary at or before `unchanged`.
   */
  sync(ids: ArrayLike<number>, length: number, unchanged: number): readonly number[] {
    const bs = this.blockSize;
    const keep = Math.min(Math.floor(Math.min(unchanged, length) / bs), this.#hashes.length);
    this.#hashes.length = keep;
    const full = Math.floor(length / bs);
    for (let b = keep; b < full; b++) this.#hashes.push(blockHash(b === 0 ? ROOT_BLOCK_HASH : this.#hashes[b - 1]!, ids, b * bs, bs));
    return this.#hashes;
  }
}

/**
 * Appends to `hashes` (a chain's full-block hashes) the hashes of the full blocks of `tail`, the tokens that follow
 * them (a partial block's tokens first): a request's answer after its prompt. Returns `hashes`.
 */
export function extendBlockHashes(hashes: number[], tail: ArrayLike<number>, blockSize: number): number[] {
  for (let b = 0; (b + 1) * blockSize <= tail.length; b++) hashes.push(blockHash(hashes.length === 0 ? ROOT_BLOCK_HASH : hashes[hashes.length - 1]!, tail, b * blockSize, blockSize));
  return hashes;
}

/** The chained hashes of the full blocks of `ids` (a whole sequence at once). */
export function blockHashes(ids: ArrayLike<number>, blockSize: number): number[] {
  return [...new BlockHashChain(blockSize).sync(ids, ids.length, 0)];
}
