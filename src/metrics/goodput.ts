import { ConfigError } from '../errors/index.js';
import type { RequestRecord } from './record.js';

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

/** True when SLOs are set at all. */
export function hasSlos(slos: Slos | undefined): slos is Slos {
  return slos !== undefined && Object.keys(slos).length > 0;
}

/**
 * Whether a request met every SLO, as vllm bench serve judges it: it completed, and each metric with an objective is
 * at most that objective (service latency, from the actual send). A request with one output token has no TPOT and
 * passes the TPOT objective, as vLLM's TPOT of 0 does.
 */
export function meetsSlos(record: Pick<RequestRecord, 'status' | 'ttft_ms' | 'tpot_ms' | 'e2el_ms'>, slos: Slos): boolean {
  if (record.status !== 'ok') return false;
  if (slos.ttft_ms !== undefined && (record.ttft_ms === null || record.ttft_ms > slos.ttft_ms)) return false;
  if (slos.tpot_ms !== undefined && record.tpot_ms !== null && record.tpot_ms > slos.tpot_ms) return false;
  if (slos.e2el_ms !== undefined && record.e2el_ms > slos.e2el_ms) return false;
  return true;
}

/** Goodput of a set of records: how many met the SLOs, their share of all requests, and their rate. */
export interface Goodput {
  slos: Slos;
  /** Requests that completed and met every SLO. */
  good_requests: number;
  /** good_requests / all summarized requests (failed ones count as not meeting). */
  share: number;
  /** good_requests / runtime_sec (requests/s): vllm bench serve's `request_goodput`. */
  request_goodput: number;
}

/** Goodput over `records` (already without warmup), with the run's runtime in seconds. */
export function computeGoodput(records: readonly RequestRecord[], slos: Slos, runtimeSec: number): Goodput {
  let good = 0;
  for (const r of records) if (meetsSlos(r, slos)) good += 1;
  return {
    slos,
    good_requests: good,
    share: records.length > 0 ? good / records.length : 0,
    request_goodput: runtimeSec > 0 ? good / runtimeSec : 0,
  };
}
