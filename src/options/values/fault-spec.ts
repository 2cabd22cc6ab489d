import { ConfigError } from '../../errors/config-error.js';

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

/**
 * Parses `500=0.01,429=0.02:2,reset=0.01` into rules. Throws ConfigError naming the bad part and the known kinds.
 * The same kind twice, or rates that sum over 1, are errors too. `flag` names the option in messages.
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
