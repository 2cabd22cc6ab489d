import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/**
 * A seeded random stream (xoroshiro128+ from pure-rand). Every random choice in chatload comes from one of
 * these, derived from --seed, so two runs with the same seed make the same choices.
 * The distributions are a few lines each and hand-written on purpose (see DESIGN.md: no library has them all
 * without pulling in hundreds of packages).
 */
export class Rng {
  readonly #gen: RandomGenerator;

  constructor(seed: number) {
    this.#gen = xoroshiro128plus(seed | 0);
  }

  /** An independent stream for `stream` (e.g. a client id) derived from `seed`. */
  static derive(seed: number, stream: number): Rng {
    // Mix the two with a 32-bit integer hash so nearby seeds and streams give unrelated sequences.
    let h = Math.imul((seed | 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul((stream | 0) + 0x632be5ab, 0xc2b2ae35);
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d);
    h ^= h >>> 15;
    return new Rng(h);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return uniformFloat64(this.#gen);
  }

  /** Uniform integer in [from, to], both included. */
  int(from: number, to: number): number {
    return uniformInt(this.#gen, from, to);
  }

  /** Exponential with the given mean (the gap of a Poisson process). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }
}
