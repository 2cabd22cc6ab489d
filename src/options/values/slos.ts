import { ConfigError } from '../../errors/config-error.js';

/** Service-level objectives for goodput (--goodput ttft:MS tpot:MS e2el:MS, any subset), in milliseconds. */
export interface Slos {
  ttft_ms?: number;
  tpot_ms?: number;
  e2el_ms?: number;
}

const METRICS = { ttft: 'ttft_ms', tpot: 'tpot_ms', e2el: 'e2el_ms' } as const;

/** Parses `--goodput` values such as `ttft:200 e2el:5000` (vllm bench serve's form). One-line ConfigError when wrong. */
export function parseSlos(items: readonly string[]): Slos {
  const slos: Slos = {};
  for (const item of items) {
    const match = /^(ttft|tpot|e2el):(\d+(?:\.\d+)?)$/.exec(item.trim());
    if (match === null || Number(match[2]) <= 0) {
      throw new ConfigError(`--goodput: expected ttft:MS, tpot:MS or e2el:MS with MS > 0, got ${JSON.stringify(item)}`);
    }
    slos[METRICS[match[1] as keyof typeof METRICS]] = Number(match[2]);
  }
  return slos;
}

/** The SLOs as a person reads them, e.g. `ttft <= 500 ms, e2el <= 10000 ms`. */
export function slosText(slos: Slos): string {
  return Object.entries(slos)
    .map(([key, value]) => `${key.replace(/_ms$/, '')} <= ${String(value)} ms`)
    .join(', ');
}
