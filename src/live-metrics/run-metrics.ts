import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestRecord } from '../metrics/record.js';

// vLLM's bucket edges (seconds), with finer ones at the low end, as the simulator's /metrics has them (sim/metrics.ts).
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const TPOT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const E2EL_BUCKETS = [0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
/** Schedule lag: from a millisecond (on time) to a minute (a load the client or the cap could not keep up with). */
const LAG_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The event-loop monitor's sampling period (ms), as ClientHealthMonitor's. */
const LOOP_RESOLUTION_MS = 10;

/** Which run the records belong to: `point` (a sweep's load point, or `run`) and `repetition` (--repeat's 1 … N). */
export interface RunLabels {
  point: string;
  repetition: string;
}

const LABELS = ['point', 'repetition'] as const;
type Label = (typeof LABELS)[number];

/** One run's sums behind the ratio gauges and the in-flight gauge. */
interface RunSums {
  labels: RunLabels;
  sent: number;
  done: number;
  prompt: number;
  /** Prompt tokens of the requests whose server reported cached tokens, and those cached tokens. */
  promptReported: number;
  cached: number;
  expected: number;
}

/**
 * The run's live Prometheus metrics (issue #32, part 3), in a private Registry: fed by the run's observer (onSend, and
 * onRecord after the Recorder has a record on disk; with --workers the records reach the coordinator's Recorder, so the
 * same), labelled by the run they belong to (`setRun`: a sweep's point, a --repeat repetition, one server across them).
 * Warmup requests are counted in `chatload_warmup_requests_total` only, as the summaries leave them out. Each event is
 * O(1); ratios and in-flight counts are set when scraped. It owns an event-loop delay monitor: close() stops it.
 */
export class LiveMetrics {
  readonly registry = new Registry();
  readonly #completed: Counter<Label>;
  readonly #failed: Counter<Label | 'kind'>;
  readonly #warmup: Counter<Label>;
  readonly #promptTokens: Counter<Label>;
  readonly #outputTokens: Counter<Label>;
  readonly #ttft: Histogram<Label>;
  readonly #tpot: Histogram<Label>;
  readonly #e2el: Histogram<Label>;
  readonly #lag: Histogram<Label>;
  readonly #loopDelay: IntervalHistogram;
  readonly #runs = new Map<string, RunSums>();
  #run: RunSums;

  constructor(labels: RunLabels = { point: 'run', repetition: '1' }) {
    const registers = [this.registry];
    const labelNames = LABELS;
    this.#run = this.#sumsOf(labels);
    this.#completed = new Counter({ name: 'chatload_requests_completed_total', help: 'Requests answered in full (warmup excluded).', labelNames, registers });
    this.#failed = new Counter({ name: 'chatload_requests_failed_total', help: 'Failed requests by error kind (warmup excluded; docs/METRICS.md).', labelNames: [...LABELS, 'kind'], registers });
    this.#warmup = new Counter({ name: 'chatload_warmup_requests_total', help: 'Warmup requests ended (--warmup-step), counted nowhere else.', labelNames, registers });
    this.#promptTokens = new Counter({ name: 'chatload_prompt_tokens_total', help: 'Prompt tokens of the completed requests.', labelNames, registers });
    this.#outputTokens = new Counter({ name: 'chatload_output_tokens_total', help: 'Output tokens of the completed requests.', labelNames, registers });
    const histogram = (name: string, help: string, buckets: number[]): Histogram<Label> => new Histogram({ name, help, labelNames, buckets, registers });
    this.#ttft = histogram('chatload_ttft_seconds', 'Time to first token (content or reasoning) from send, seconds, of completed requests.', TTFT_BUCKETS);
    this.#tpot = histogram('chatload_tpot_seconds', 'Time per output token after the first, seconds, of completed requests with 2 or more output tokens.', TPOT_BUCKETS);
    this.#e2el = histogram('chatload_e2el_seconds', 'End-to-end latency from send, seconds, of completed requests.', E2EL_BUCKETS);
    this.#lag = histogram('chatload_schedule_lag_seconds', 'Send minus scheduled send, seconds, of requests a load model scheduled (open loop, --request-rate, traces).', LAG_BUCKETS);
    this.#loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.#loopDelay.enable();
    this.#gauges(registers);
    this.#present();
  }

  /** The run whose records come next (a sweep's point, a repetition): its series start at 0. */
  setRun(labels: RunLabels): void {
    this.#run = this.#sumsOf(labels);
    this.#present();
  }

  /** A request is about to be sent. */
  onSend(): void {
    this.#run.sent += 1;
  }

  /** A finished request, once on disk. */
  onRecord(record: RequestRecord): void {
    const run = this.#run;
    run.done += 1;
    const labels = run.labels;
    if (record.warmup) return this.#warmup.inc(labels);
    if (record.status === 'error') return this.#failed.inc({ ...labels, kind: record.error_kind ?? 'other' });
    this.#completed.inc(labels);
    this.#promptTokens.inc(labels, record.input_num_tokens);
    this.#outputTokens.inc(labels, record.output_num_tokens);
    if (record.ttft_ms !== null) this.#ttft.observe(labels, record.ttft_ms / 1000);
    if (record.tpot_ms !== null) this.#tpot.observe(labels, record.tpot_ms / 1000);
    this.#e2el.observe(labels, record.e2el_ms / 1000);
    if (record.schedule_lag_ms !== null) this.#lag.observe(labels, Math.max(0, record.schedule_lag_ms) / 1000);
    run.prompt += record.input_num_tokens;
    run.expected += record.expected_cached_tokens;
    if (record.cached_tokens !== null) {
      run.cached += record.cached_tokens;
      run.promptReported += record.input_num_tokens;
    }
  }

  /** The Prometheus text exposition, and its Content-Type. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Stops the event-loop delay monitor. */
  close(): void {
    this.#loopDelay.disable();
  }

  #sumsOf(labels: RunLabels): RunSums {
    const key = `${labels.point}\u0000${labels.repetition}`;
    let sums = this.#runs.get(key);
    if (sums === undefined) {
      sums = { labels: { ...labels }, sent: 0, done: 0, prompt: 0, promptReported: 0, cached: 0, expected: 0 };
      this.#runs.set(key, sums);
    }
    return sums;
  }

  /** The run's counters and histograms at 0 from its first scrape, so rate() and deltas work from the start. */
  #present(): void {
    const labels = this.#run.labels;
    for (const counter of [this.#completed, this.#warmup, this.#promptTokens, this.#outputTokens]) counter.inc(labels, 0);
    for (const histogram of [this.#ttft, this.#tpot, this.#e2el, this.#lag]) histogram.zero(labels);
  }

  /** The gauges, set when scraped from the runs' sums and the event-loop monitor. */
  #gauges(registers: Registry[]): void {
    const runs = this.#runs;
    const perRun = (name: string, help: string, read: (sums: RunSums) => number | null): void => {
      new Gauge({
        name,
        help,
        labelNames: LABELS,
        registers,
        collect() {
          for (const sums of runs.values()) {
            const value = read(sums);
            if (value !== null) this.set(sums.labels, value);
          }
        },
      });
    };
    perRun('chatload_requests_in_flight', 'Requests sent and not yet ended (warmup included).', (s) => Math.max(0, s.sent - s.done));
    perRun('chatload_cache_hit_ratio', 'Server-reported cached prompt tokens / prompt tokens, of completed requests whose server reported them.', (s) => (s.promptReported > 0 ? s.cached / s.promptReported : null));
    perRun('chatload_cache_expected_hit_ratio', "The expected-cache model's cached prompt tokens / prompt tokens, of completed requests (docs/METRICS.md).", (s) => (s.prompt > 0 ? s.expected / s.prompt : null));
    const loopDelay = this.#loopDelay;
    new Gauge({
      name: 'chatload_client_event_loop_delay_seconds',
      help: "The client's (main thread's) event-loop delay since the previous scrape, seconds, by quantile (1 = max).",
      labelNames: ['quantile'],
      registers,
      collect() {
        const has = loopDelay.count > 0;
        // The histogram holds whole intervals between the monitor's timer runs: the delay is the excess over its
        // resolution, as results.json's client_health.event_loop_delay_ms has it (metrics/client-health.ts).
        const excess = (ns: number): number => (has ? Math.max(0, ns / 1e9 - LOOP_RESOLUTION_MS / 1000) : 0);
        for (const q of [0.5, 0.99]) this.set({ quantile: String(q) }, excess(loopDelay.percentile(q * 100)));
        this.set({ quantile: '1' }, excess(loopDelay.max));
        // A window per scrape: the value says how the loop ran lately, not since the run's start.
        loopDelay.reset();
      },
    });
  }
}
