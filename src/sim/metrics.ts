import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, type Aggregator } from 'prom-client';
import type { Scheduler, SchedulerObserver, FinishReason } from './scheduler.js';

// vLLM's bucket edges (seconds), with a few finer ones at the low end where the simulator's fast profiles live.
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const ITL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const E2E_BUCKETS = [0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

/**
 * The simulator's Prometheus metrics under vLLM's names, label `model_name`, in a private Registry (several
 * simulators can share a process). Counters move as the engine reports events; gauges are read at scrape time.
 * It also owns the event-loop delay monitor behind `chatload_sim_event_loop_delay_p99_seconds`.
 */
export class SimMetrics implements SchedulerObserver {
  /** The registry to render for GET /metrics. */
  readonly registry = new Registry();
  readonly #loopDelay: IntervalHistogram;
  readonly #queries: Counter.Internal;
  readonly #hits: Counter.Internal;
  readonly #promptTokens: Counter.Internal;
  readonly #generationTokens: Counter.Internal;
  readonly #preemptions: Counter.Internal;
  readonly #success: Counter<'model_name' | 'finished_reason'>;
  readonly #ttft: Histogram.Internal<string>;
  readonly #itl: Histogram.Internal<string>;
  readonly #e2e: Histogram.Internal<string>;
  readonly #model: string;

  constructor(modelName: string, scheduler: () => Scheduler) {
    this.#model = modelName;
    const labelNames = ['model_name'] as const;
    const labels = { model_name: modelName };
    const registers = [this.registry];
    this.#loopDelay = monitorEventLoopDelay({ resolution: 10 });
    this.#loopDelay.enable();
    registerGauges(this.registry, modelName, scheduler, this.#loopDelay);
    const counter = (name: string, help: string): Counter.Internal => {
      const child = new Counter({ name, help, labelNames, registers }).labels(labels);
      child.inc(0); // present (at 0) from the first scrape, so deltas work
      return child;
    };
    this.#queries = counter('vllm:prefix_cache_queries_total', 'Prompt tokens looked up in the prefix cache (per admission).');
    this.#hits = counter('vllm:prefix_cache_hits_total', 'Prompt tokens the prefix cache supplied (per admission).');
    this.#promptTokens = counter('vllm:prompt_tokens_total', 'Prompt tokens of requests whose prefill completed.');
    this.#generationTokens = counter('vllm:generation_tokens_total', 'Generated tokens.');
    this.#preemptions = counter('vllm:num_preemptions_total', 'Preemptions (recompute) of running requests.');
    this.#success = new Counter({
      name: 'vllm:request_success_total',
      help: 'Finished requests by finish reason.',
      labelNames: ['model_name', 'finished_reason'],
      registers,
    });
    for (const reason of ['stop', 'length', 'abort']) this.#success.inc({ model_name: modelName, finished_reason: reason }, 0);
    const histogram = (name: string, help: string, buckets: number[]): Histogram.Internal<string> =>
      new Histogram({ name, help, labelNames, buckets, registers }).labels(labels);
    this.#ttft = histogram('vllm:time_to_first_token_seconds', 'Time to first token (engine side), seconds.', TTFT_BUCKETS);
    this.#itl = histogram('vllm:inter_token_latency_seconds', 'Time between consecutive tokens, seconds.', ITL_BUCKETS);
    this.#e2e = histogram('vllm:e2e_request_latency_seconds', 'Arrival to finish, seconds.', E2E_BUCKETS);
  }

  /** p99 event-loop delay of this thread since the last scrape (or start), seconds. */
  get eventLoopDelayP99Seconds(): number {
    return this.#loopDelay.count > 0 ? this.#loopDelay.percentile(99) / 1e9 : 0;
  }

  /** The Prometheus text exposition. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** Content-Type of `render()`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Stops the event-loop monitor. */
  close(): void {
    this.#loopDelay.disable();
  }

  onAdmit(queriedTokens: number, hitTokens: number): void {
    this.#queries.inc(queriedTokens);
    this.#hits.inc(hitTokens);
  }

  onPreempt(): void {
    this.#preemptions.inc();
  }

  onPrefillDone(promptTokens: number, ttftMs: number): void {
    this.#promptTokens.inc(promptTokens);
    this.#ttft.observe(ttftMs / 1000);
  }

  onToken(interTokenMs: number | null): void {
    this.#generationTokens.inc();
    if (interTokenMs !== null) this.#itl.observe(interTokenMs / 1000);
  }

  onFinish(reason: FinishReason, e2eMs: number): void {
    this.#success.inc({ model_name: this.#model, finished_reason: reason });
    if (reason !== 'abort') this.#e2e.observe(e2eMs / 1000);
  }
}

/**
 * The simulator's gauges, read at scrape time. `aggregator`: how the router's page (replica-pages.ts) folds the
 * replicas' values; counters and histograms sum.
 */
function registerGauges(registry: Registry, modelName: string, scheduler: () => Scheduler, loopDelay: IntervalHistogram): void {
  const labelNames = ['model_name'] as const;
  const labels = { model_name: modelName };
  const registers = [registry];
  const gauge = (name: string, help: string, read: () => number, aggregator: Aggregator = 'sum'): void => {
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      aggregator,
      collect() {
        this.set(labels, read());
      },
    });
  };
  gauge('vllm:num_requests_running', 'Requests in the running batch.', () => scheduler().numRunning);
  gauge('vllm:num_requests_waiting', 'Requests waiting for admission.', () => scheduler().numWaiting);
  gauge('vllm:kv_cache_usage_perc', 'KV cache usage, 0..1 (1 = full).', () => scheduler().kv.usage, 'average');
  // vLLM's cache_config_info: an info gauge (value 1) whose labels are the cache config, num_gpu_blocks and
  // block_size among them; chatload reads the KV capacity from it (issue #13).
  new Gauge({
    name: 'vllm:cache_config_info',
    help: 'Information of the LLMEngine CacheConfig.',
    labelNames: ['block_size', 'num_gpu_blocks', 'enable_prefix_caching'],
    registers,
    // The router's page rewrites num_gpu_blocks to the replicas' total first (replica-pages.ts), then keeps one.
    aggregator: 'first',
    collect() {
      const { config } = scheduler();
      this.set({ block_size: String(config.block_size), num_gpu_blocks: String(config.num_gpu_blocks), enable_prefix_caching: String(config.enable_prefix_caching) }, 1);
    },
  });
  // Whose prefix-cache semantics the simulator runs (SimConfig.cache_semantics): the expected-cache model reads it.
  new Gauge({
    name: 'chatload_sim_cache_semantics_info',
    help: "The simulator's prefix-cache semantics (vllm, sglang or llamacpp).",
    labelNames: ['semantics'],
    registers,
    aggregator: 'first',
    collect() {
      this.set({ semantics: scheduler().config.cache_semantics }, 1);
    },
  });
  gauge('vllm:gpu_cache_usage_perc', 'KV cache usage, 0..1 (older name of kv_cache_usage_perc).', () => scheduler().kv.usage, 'average');
  new Gauge({
    name: 'chatload_sim_event_loop_delay_p99_seconds',
    help: "p99 of the simulator thread's event-loop delay since the previous scrape (perf_hooks.monitorEventLoopDelay).",
    registers,
    // The replicas share one loop: each measures it; the router's page shows the worst.
    aggregator: 'max',
    collect() {
      this.set(loopDelay.count > 0 ? loopDelay.percentile(99) / 1e9 : 0);
      // A window per scrape: the value describes the last interval, not the whole life of the process.
      loopDelay.reset();
    },
  });
}
