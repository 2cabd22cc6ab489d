import { ConfigError } from '../errors/index.js';
import { Rng } from '../synth/rng.js';

/** The fault kinds `--faults` knows. `503` is not one: it is the queue-full behaviour (config max_waiting). */
export const FAULT_KINDS = ['500', '429', 'reset', 'stall', 'trickle', 'malformed', 'truncate'] as const;

/** One fault kind. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One `kind=rate[:param]` entry: `rate` a probability per request; `param` is Retry-After seconds (429) or ms per token (trickle). */
export interface FaultRule {
  kind: FaultKind;
  rate: number;
  param?: number;
}

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

/**
 * Parses `500=0.01,429=0.02:2,reset=0.01` into rules. Throws ConfigError naming the bad part and the known kinds.
 * The same kind twice, or rates that sum over 1, are errors too.
 */
export function parseFaultSpec(spec: string, flag = '--faults'): FaultRule[] {
  const rules: FaultRule[] = [];
  const known = `known kinds: ${FAULT_KINDS.join(', ')} (503 is the queue-full behaviour, set max_waiting)`;
  for (const rawPart of spec.split(',')) {
    const part = rawPart.trim();
    if (part === '') continue;
    const m = /^([a-z0-9]+)=([0-9]*\.?[0-9]+(?:e-?[0-9]+)?)(?::([0-9]*\.?[0-9]+))?$/i.exec(part);
    if (m === null) throw new ConfigError(`${flag}: cannot parse '${part}': expected kind=rate or kind=rate:param`, { hint: known });
    const kind = m[1]!.toLowerCase();
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) throw new ConfigError(`${flag}: unknown fault kind '${kind}' in '${part}'`, { hint: known });
    const rate = Number(m[2]);
    if (!(rate >= 0 && rate <= 1)) throw new ConfigError(`${flag}: rate ${m[2]} in '${part}' must be a probability in [0, 1]`);
    if (rules.some((r) => r.kind === kind)) throw new ConfigError(`${flag}: fault kind '${kind}' given twice`);
    const rule: FaultRule = { kind: kind as FaultKind, rate };
    if (m[3] !== undefined) {
      if (kind !== '429' && kind !== 'trickle') throw new ConfigError(`${flag}: '${part}': only 429 (Retry-After s) and trickle (ms per token) take a :param`);
      rule.param = Number(m[3]);
    }
    rules.push(rule);
  }
  const total = rules.reduce((sum, r) => sum + r.rate, 0);
  if (total > 1 + 1e-9) throw new ConfigError(`${flag}: rates sum to ${total}, more than 1`);
  return rules;
}

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
