import type { Slos } from '../options/values/slos.js';
import type { RequestRecord } from './record.js';

// --goodput is parsed once, with the other options; summaries take the parsed Slos.
export { parseSlos, type Slos } from '../options/values/slos.js';

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

