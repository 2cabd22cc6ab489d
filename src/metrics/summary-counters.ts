import type { ErrorKind } from '../client/types.js';
import { emptyErrorKindCounts, ERROR_KINDS } from './error-kinds.js';
import { hasSlos, meetsSlos, type Slos } from './goodput.js';
import { efficiencyTerms, hitRatio } from './prefix-cache-tally.js';
import type { ContextBucket, Summary, SummaryInput, SummaryMetrics, TokenSourceCounts } from './summary-types.js';

/** SummaryCounters as toJSON() writes them: plain numbers (null for the times of an empty set). */
export interface SerializedSummaryCounters {
  requests: number;
  failed: number;
  failed_by_kind: Record<ErrorKind, number>;
  input_sources: TokenSourceCounts;
  output_sources: TokenSourceCounts;
  first_sent_ms: number | null;
  last_done_ms: number | null;
  total_input: number;
  total_output: number;
  total_cached: number;
  total_expected: number;
  cached_known: number;
  known_input: number;
  efficiency_cached: number;
  efficiency_expected: number;
  good: number;
}

/**
 * The exact counters of a summary (no per-value arrays), added one non-warmup record at a time: counts, token totals,
 * the first send and last end, cache sums and goodput. They merge exactly (sums, a min and a max).
 */
export class SummaryCounters {
  readonly #slos: Slos | undefined;
  #requests = 0;
  #failed = 0;
  #failedByKind = emptyErrorKindCounts();
  #inputSources: TokenSourceCounts = { server: 0, local: 0 };
  #outputSources: TokenSourceCounts = { server: 0, local: 0 };
  #firstSentMs = Infinity;
  #lastDoneMs = -Infinity;
  #totalInput = 0;
  #totalOutput = 0;
  #totalCached = 0;
  #totalExpected = 0;
  #cachedKnown = 0;
  #knownInput = 0;
  #efficiencyCached = 0;
  #efficiencyExpected = 0;
  #good = 0;

  constructor(slos: Slos | undefined) {
    this.#slos = hasSlos(slos) ? slos : undefined;
  }

  /** Counts one non-warmup record. */
  add(r: SummaryInput): void {
    this.#requests++;
    if (r.sent_at_ms < this.#firstSentMs) this.#firstSentMs = r.sent_at_ms;
    if (r.done_at_ms > this.#lastDoneMs) this.#lastDoneMs = r.done_at_ms;
    if (this.#slos !== undefined && meetsSlos(r, this.#slos)) this.#good++;
    if (r.status === 'error') {
      this.#failed++;
      this.#failedByKind[r.error_kind ?? 'other']++;
      return;
    }
    this.#inputSources[r.input_tokens_source]++;
    this.#outputSources[r.output_tokens_source]++;
    this.#totalInput += r.input_num_tokens;
    this.#totalOutput += r.output_num_tokens;
    this.#totalExpected += r.expected_cached_tokens;
    if (r.cached_tokens !== null) {
      this.#cachedKnown++;
      this.#totalCached += r.cached_tokens;
      this.#knownInput += r.input_num_tokens;
      const terms = efficiencyTerms(r);
      if (terms !== undefined) {
        this.#efficiencyCached += terms.cached;
        this.#efficiencyExpected += terms.expected;
      }
    }
  }

  /** Adds other's counts to these (the SLOs are this one's). */
  merge(other: SummaryCounters): this {
    this.#requests += other.#requests;
    this.#failed += other.#failed;
    for (const kind of ERROR_KINDS) this.#failedByKind[kind] += other.#failedByKind[kind];
    for (const key of ['server', 'local'] as const) {
      this.#inputSources[key] += other.#inputSources[key];
      this.#outputSources[key] += other.#outputSources[key];
    }
    this.#firstSentMs = Math.min(this.#firstSentMs, other.#firstSentMs);
    this.#lastDoneMs = Math.max(this.#lastDoneMs, other.#lastDoneMs);
    this.#totalInput += other.#totalInput;
    this.#totalOutput += other.#totalOutput;
    this.#totalCached += other.#totalCached;
    this.#totalExpected += other.#totalExpected;
    this.#cachedKnown += other.#cachedKnown;
    this.#knownInput += other.#knownInput;
    this.#efficiencyCached += other.#efficiencyCached;
    this.#efficiencyExpected += other.#efficiencyExpected;
    this.#good += other.#good;
    return this;
  }

  /** The Summary of what was counted, with its Stats and TTFT by context from the caller. */
  summary(warmupExcluded: number, parts: { metrics: SummaryMetrics; ttftByContext: ContextBucket[]; approximateMetrics: string[] }): Summary {
    const n = this.#requests;
    const completed = n - this.#failed;
    const runtimeSec = n > 0 ? Math.max(0, this.#lastDoneMs - this.#firstSentMs) / 1000 : 0;
    const perSec = (x: number): number => (runtimeSec > 0 ? x / runtimeSec : 0);
    return {
      requests: n,
      completed,
      failed: this.#failed,
      failed_by_kind: { ...this.#failedByKind },
      warmup_excluded: warmupExcluded,
      error_rate: n > 0 ? this.#failed / n : 0,
      runtime_sec: runtimeSec,
      request_throughput: perSec(completed),
      output_throughput: perSec(this.#totalOutput),
      total_token_throughput: perSec(this.#totalInput + this.#totalOutput),
      total_input_tokens: this.#totalInput,
      total_output_tokens: this.#totalOutput,
      total_cached_tokens: this.#totalCached,
      total_expected_cached_tokens: this.#totalExpected,
      cached_tokens_known: this.#cachedKnown,
      cache_hit_ratio: hitRatio(this.#totalCached, this.#knownInput),
      cache_efficiency: this.#efficiencyExpected > 0 ? this.#efficiencyCached / this.#efficiencyExpected : null,
      token_sources: { input: { ...this.#inputSources }, output: { ...this.#outputSources } },
      metrics: parts.metrics,
      ttft_by_context: parts.ttftByContext,
      // Good requests over all summarized ones, and per second of runtime (vllm bench serve's request_goodput).
      goodput:
        this.#slos === undefined
          ? null
          : { slos: this.#slos, good_requests: this.#good, share: n > 0 ? this.#good / n : 0, request_goodput: perSec(this.#good) },
      approximate_metrics: parts.approximateMetrics,
    };
  }

  /** The counters as plain data (fromJSON() restores them exactly). */
  toJSON(): SerializedSummaryCounters {
    const empty = this.#requests === 0;
    return {
      requests: this.#requests,
      failed: this.#failed,
      failed_by_kind: { ...this.#failedByKind },
      input_sources: { ...this.#inputSources },
      output_sources: { ...this.#outputSources },
      first_sent_ms: empty ? null : this.#firstSentMs,
      last_done_ms: empty ? null : this.#lastDoneMs,
      total_input: this.#totalInput,
      total_output: this.#totalOutput,
      total_cached: this.#totalCached,
      total_expected: this.#totalExpected,
      cached_known: this.#cachedKnown,
      known_input: this.#knownInput,
      efficiency_cached: this.#efficiencyCached,
      efficiency_expected: this.#efficiencyExpected,
      good: this.#good,
    };
  }

  /** Restores toJSON()'s output, counted under `slos`. */
  static fromJSON(value: SerializedSummaryCounters, slos: Slos | undefined): SummaryCounters {
    const out = new SummaryCounters(slos);
    out.#requests = value.requests;
    out.#failed = value.failed;
    out.#failedByKind = { ...emptyErrorKindCounts(), ...value.failed_by_kind };
    out.#inputSources = { ...value.input_sources };
    out.#outputSources = { ...value.output_sources };
    out.#firstSentMs = value.first_sent_ms ?? Infinity;
    out.#lastDoneMs = value.last_done_ms ?? -Infinity;
    out.#totalInput = value.total_input;
    out.#totalOutput = value.total_output;
    out.#totalCached = value.total_cached;
    out.#totalExpected = value.total_expected;
    out.#cachedKnown = value.cached_known;
    out.#knownInput = value.known_input;
    out.#efficiencyCached = value.efficiency_cached;
    out.#efficiencyExpected = value.efficiency_expected;
    out.#good = value.good;
    return out;
  }
}
