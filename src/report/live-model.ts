import type { RequestRecord } from '../metrics/record.js';
import { percentile } from '../metrics/stats.js';
import { percentileSupported } from '../metrics/percentile-support.js';

/** The phase of a run as the live view names it. */
export type LivePhase = 'starting' | 'warmup' | 'ramp-up' | 'steady' | 'draining';

/** Seconds of the rolling window behind the live rates (req/s, tok/s). */
export const RATE_WINDOW_SEC = 10;
/** Most recent latencies kept for the live percentiles: the present, not the whole run. */
export const LATENCY_WINDOW = 512;

/** A percentile pair shown live; p99 is null while the window holds too few values for it (as the terminal's '-'). */
export interface LivePercentiles {
  p50: number;
  p99: number | null;
  n: number;
}

/** What the live view shows at one instant: a plain value, rendered by live-panel.ts. */
export interface LiveSnapshot {
  elapsedMs: number;
  phase: LivePhase;
  /** Finished requests (warmup included: they are progress). */
  done: number;
  /** Requests expected in all, when known. */
  totalRequests: number | undefined;
  /** --duration (ms), when given: progress is then time. */
  durationMs: number | undefined;
  /** Requests sent and not yet finished; null when not known (worker threads do not report sends). */
  inFlight: number | null;
  /** Sessions waiting for a --max-concurrency slot; null when the load has no such queue. */
  queued: number | null;
  /** Completed requests and output tokens per second over the last RATE_WINDOW_SEC seconds. */
  requestRate: number;
  outputTokenRate: number;
  ttft: LivePercentiles | null;
  tpot: LivePercentiles | null;
  /** Σ cached / Σ prompt (server-reported) and Σ expected cached / Σ prompt; null when nothing reported. */
  cacheActual: number | null;
  cacheExpected: number | null;
  /** Failed requests by error kind, most first. */
  errors: Array<[string, number]>;
  /** Client health over the last second: worst event-loop delay (ms) and CPU (% of one core); null before the first sample. */
  loopDelayMs: number | null;
  cpuPercent: number | null;
  /** `sweep`: which point runs, e.g. "point 2/5: concurrency 8". */
  heading: string | undefined;
}

/** A ring of the last LATENCY_WINDOW values. */
class Ring {
  readonly #values = new Float64Array(LATENCY_WINDOW);
  #count = 0;
  push(value: number): void {
    this.#values[this.#count++ % LATENCY_WINDOW] = value;
  }
  percentiles(): LivePercentiles | null {
    const n = Math.min(this.#count, LATENCY_WINDOW);
    if (n === 0) return null;
    const sorted = this.#values.slice(0, n).sort();
    return { p50: percentile(sorted, 50), p99: percentileSupported(99, n) ? percentile(sorted, 99) : null, n };
  }
}

/**
 * The live view's data: small counters fed by the run's observer events (onSend, onRecord, onPhase, onQueued) and a
 * per-second health sample, read as a LiveSnapshot. Each event is O(1); a snapshot sorts two rings of 512 values.
 * It reads no clock itself: the caller passes `nowMs` (performance.now() in the CLI), so tests drive time.
 */
export class LiveModel {
  readonly #startMs: number;
  #phase: LivePhase = 'starting';
  #rampUpMs = 0;
  #phaseStartMs = 0;
  #done = 0;
  #sent = 0;
  #sendsSeen = false;
  #queued: number | null = null;
  readonly #ttft = new Ring();
  readonly #tpot = new Ring();
  /** Per-second buckets of completed requests and output tokens, indexed by whole second modulo the window. */
  readonly #bucketSec = new Float64Array(RATE_WINDOW_SEC + 1).fill(-1);
  readonly #bucketRequests = new Float64Array(RATE_WINDOW_SEC + 1);
  readonly #bucketTokens = new Float64Array(RATE_WINDOW_SEC + 1);
  #input = 0;
  #inputKnown = 0;
  #cached = 0;
  #expected = 0;
  readonly #errors = new Map<string, number>();
  #loopDelayMs: number | null = null;
  #cpuPercent: number | null = null;
  totalRequests: number | undefined;
  durationMs: number | undefined;
  heading: string | undefined;

  constructor(nowMs: number, options: { totalRequests?: number; durationMs?: number; rampUpMs?: number; heading?: string } = {}) {
    this.#startMs = nowMs;
    this.totalRequests = options.totalRequests;
    this.durationMs = options.durationMs;
    this.#rampUpMs = options.rampUpMs ?? 0;
    this.heading = options.heading;
  }

  /** The load's phase change. */
  onPhase(phase: 'warmup' | 'benchmark' | 'stopping', nowMs: number): void {
    this.#phase = phase === 'warmup' ? 'warmup' : phase === 'stopping' ? 'draining' : 'steady';
    this.#phaseStartMs = nowMs;
  }

  onSend(): void {
    this.#sent++;
    this.#sendsSeen = true;
  }

  onQueued(delta: 1 | -1): void {
    this.#queued = (this.#queued ?? 0) + delta;
  }

  onRecord(record: RequestRecord, nowMs: number): void {
    this.#done++;
    if (record.status === 'error') {
      const kind = record.error_kind ?? 'other';
      this.#errors.set(kind, (this.#errors.get(kind) ?? 0) + 1);
      return;
    }
    const sec = Math.floor((nowMs - this.#startMs) / 1000);
    const slot = sec % this.#bucketSec.length;
    if (this.#bucketSec[slot] !== sec) {
      this.#bucketSec[slot] = sec;
      this.#bucketRequests[slot] = 0;
      this.#bucketTokens[slot] = 0;
    }
    this.#bucketRequests[slot]! += 1;
    this.#bucketTokens[slot]! += record.output_num_tokens;
    if (record.ttft_ms !== null) this.#ttft.push(record.ttft_ms);
    if (record.tpot_ms !== null) this.#tpot.push(record.tpot_ms);
    this.#input += record.input_num_tokens;
    this.#expected += record.expected_cached_tokens;
    if (record.cached_tokens !== null) {
      this.#cached += record.cached_tokens;
      this.#inputKnown += record.input_num_tokens;
    }
  }

  /** The client's health over the last sample period. */
  onHealth(loopDelayMs: number, cpuPercent: number): void {
    this.#loopDelayMs = loopDelayMs;
    this.#cpuPercent = cpuPercent;
  }

  snapshot(nowMs: number): LiveSnapshot {
    const elapsedMs = nowMs - this.#startMs;
    const sec = Math.floor(elapsedMs / 1000);
    // The window: the last RATE_WINDOW_SEC whole seconds before this one, or fewer at the start (never divide by 10
    // when the run is 2 s old). The current, partial second is left out so the rate does not dip each second.
    let requests = 0;
    let tokens = 0;
    const windowSec = Math.min(RATE_WINDOW_SEC, sec);
    for (let i = 0; i < this.#bucketSec.length; i++) {
      const s = this.#bucketSec[i]!;
      if (s >= sec - windowSec && s < sec) {
        requests += this.#bucketRequests[i]!;
        tokens += this.#bucketTokens[i]!;
      }
    }
    let phase = this.#phase;
    if (phase === 'steady' && this.#rampUpMs > 0 && nowMs - this.#phaseStartMs < this.#rampUpMs) phase = 'ramp-up';
    return {
      elapsedMs,
      phase,
      done: this.#done,
      totalRequests: this.totalRequests,
      durationMs: this.durationMs,
      inFlight: this.#sendsSeen ? Math.max(0, this.#sent - this.#done) : null,
      queued: this.#queued,
      requestRate: windowSec > 0 ? requests / windowSec : 0,
      outputTokenRate: windowSec > 0 ? tokens / windowSec : 0,
      ttft: this.#ttft.percentiles(),
      tpot: this.#tpot.percentiles(),
      cacheActual: this.#inputKnown > 0 ? this.#cached / this.#inputKnown : null,
      cacheExpected: this.#input > 0 ? this.#expected / this.#input : null,
      errors: [...this.#errors].sort((a, b) => b[1] - a[1]),
      loopDelayMs: this.#loopDelayMs,
      cpuPercent: this.#cpuPercent,
      heading: this.heading,
    };
  }
}
