import type { FaultKind, FaultRule } from '../options/values/fault-spec.js';
import { Rng } from '../util/rng.js';

// The fault spec (`--faults`, `--sim-faults`) is an option value: it is parsed in options/, once.
export { FAULT_KINDS, parseFaultSpec, type FaultKind, type FaultRule } from '../options/values/fault-spec.js';

/** The fault that hit one request, with its parameter resolved. */
export interface Fault {
  kind: FaultKind;
  /** 429: Retry-After in seconds. trickle: ms between tokens. */
  param: number;
  /** reset/malformed/truncate: how many tokens are written before the fault strikes (at least 1). */
  afterTokens: number;
}

/** Default parameters: Retry-After 1 s, one token per second when trickling. */
const DEFAULT_PARAM: Partial<Record<FaultKind, number>> = { '429': 1, trickle: 1000 };

/** Draws at most one fault per request from the rules, from a stream seeded by --seed (same seed, same faults in arrival order). */
export class FaultInjector {
  readonly rules: readonly FaultRule[];
  readonly #rng: Rng;

  constructor(rules: readonly FaultRule[], seed: number) {
    this.rules = rules;
    this.#rng = Rng.derive(seed, 0xfa017);
  }

  /** Whether any rule can fire. */
  get enabled(): boolean {
    return this.rules.some((r) => r.rate > 0);
  }

  /** The fault for the next request, or null. The rules partition [0, 1): one uniform draw picks at most one. */
  draw(): Fault | null {
    if (!this.enabled) return null;
    const u = this.#rng.next();
    let edge = 0;
    for (const rule of this.rules) {
      edge += rule.rate;
      if (u < edge) return { kind: rule.kind, param: rule.param ?? DEFAULT_PARAM[rule.kind] ?? 0, afterTokens: this.#rng.int(1, 4) };
    }
    return null;
  }
}
