// The parts a Summary is built from either way (all records at once, or one at a time): its exact counters and
// the context-length buckets of TTFT.
import { emptyErrorKindCounts } from './error-kinds.js';
import { hasSlos, meetsSlos, type Slos } from './goodput.js';
import type { RequestRecord } from './record.js';
import type { ContextBucket, Summary, SummaryMetrics, TokenSourceCounts } from './summary.js';

/** The exact counters of a summary (no per-value arrays), added one non-warmup record at a time. */
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
  add(r: RequestRecord): void {
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
      if (r.expected_cached_tokens > 0) {
        this.#efficiencyCached += r.cached_tokens;
        this.#efficiencyExpected += r.expected_cached_tokens;
      }
    }
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
      cache_hit_ratio: this.#cachedKnown > 0 && this.#knownInput > 0 ? this.#totalCached / this.#knownInput : null,
      cache_efficiency: this.#efficiencyExpected > 0 ? this.#efficiencyCached / this.#efficiencyExpected : null,
      token_sources: { input: { ...this.#inputSources }, output: { ...this.#outputSources } },
      metrics: parts.metrics,
      ttft_by_context: parts.ttftByContext,
      // As computeGoodput(): good requests over all summarized ones, and per second of runtime.
      goodput:
        this.#slos === undefined
          ? null
          : { slos: this.#slos, good_requests: this.#good, share: n > 0 ? this.#good / n : 0, request_goodput: perSec(this.#good) },
      approximate_metrics: parts.approximateMetrics,
    };
  }
}

/** Bucket edges in input tokens: powers of two from 1k to 32k. */
export const CONTEXT_EDGES = [0, 1024, 2048, 4096, 8192, 16384, 32768];

function contextLabel(tokens: number): string {
  return tokens === 0 ? '0' : `${tokens / 1024}k`;
}

/** The index of the context bucket a prompt of `inputTokens` falls in. */
export function contextBucket(inputTokens: number): number {
  let b = CONTEXT_EDGES.length - 1;
  while (inputTokens < CONTEXT_EDGES[b]!) b -= 1;
  return b;
}

/** A context bucket's label and bounds. */
export function contextRange(b: number): Pick<ContextBucket, 'label' | 'min_tokens' | 'max_tokens'> {
  const min = CONTEXT_EDGES[b]!;
  const max = CONTEXT_EDGES[b + 1] ?? null;
  return { label: max === null ? `${contextLabel(min)}+` : `${contextLabel(min)}-${contextLabel(max)}`, min_tokens: min, max_tokens: max };
}
