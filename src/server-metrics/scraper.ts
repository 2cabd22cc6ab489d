import { request } from '../util/undici.js';
import { splitUrlTextCredentials } from '../client/url-credentials.js';
import { engineDisplayName, type EngineName } from '../server-engine/profiles.js';
import { metricPrefixes, readServerMetrics, type ServerMetricsReading, type ServerMetricsSnapshot } from './parse.js';
import { counted } from '../util/plural.js';
import { GpuPageLog, type ScrapePhase } from './gpu-log.js';
import { readKvCapacity, type ServerKvCapacity } from './kv-capacity.js';

/** One scrape during the run: when (ms since the scraper started) and what the gauges said. */
export interface ServerMetricsSample {
  t_ms: number;
  requests_running: number | null;
  requests_waiting: number | null;
  kv_cache_usage: number | null;
}

/**
 * One page read as a report keeps its first and last: the snapshot, and the token and request counters' values. A merge
 * of runs that scraped one server (merge-reports.ts) takes its deltas from these values, the largest after less the
 * smallest before; the token counters are absent in files written before schema 1.1.0.
 */
export interface ServerMetricsPoint extends ServerMetricsSnapshot {
  prompt_tokens?: number | null;
  generation_tokens?: number | null;
  requests?: number | null;
}

/** A page read as a report keeps it (see ServerMetricsPoint); null when the scrape failed. */
function pointOf(reading: ServerMetricsReading | null): ServerMetricsPoint | null {
  if (reading === null) return null;
  return { ...reading.snapshot, prompt_tokens: reading.prompt_tokens, generation_tokens: reading.generation_tokens, requests: reading.requests };
}

/** What --scrape-metrics found: counters before and after, their deltas, and the gauges over time. */
export interface ServerMetricsReport {
  url: string;
  scrapes: number;
  failures: number;
  /** The last failure's message, when there was one. */
  last_error: string | null;
  before: ServerMetricsPoint | null;
  after: ServerMetricsPoint | null;
  /** Counter deltas over the run (after - before); null when either side is unknown. */
  prefix_cache_queries: number | null;
  prefix_cache_hits: number | null;
  /** prefix_cache_hits / prefix_cache_queries over the run, as the server counted them. */
  server_cache_hit_rate: number | null;
  /** Prompt and generated tokens over the run (after - before), as the engine counts them; null when unknown. */
  prompt_tokens: number | null;
  generation_tokens: number | null;
  /** Requests finished over the run (after - before); null when unknown. Absent in files of earlier versions. */
  requests?: number | null;
  /** The engine whose metric names were read first. */
  engine: EngineName;
  /** Why the counters are null, when they are: every scrape failed, or the page has no metric chatload knows. */
  warning: string | null;
  series: ServerMetricsSample[];
}

/** A report's counter deltas and hit rate, from its first and last page reads (null where either lacks the counter). */
export type CounterDeltas = Pick<ServerMetricsReport, 'prefix_cache_queries' | 'prefix_cache_hits' | 'server_cache_hit_rate' | 'prompt_tokens' | 'generation_tokens' | 'requests'>;

/** The counters a report keeps the values of in `before` and `after`, and the deltas of. */
export const SERVER_COUNTERS = ['prefix_cache_queries', 'prefix_cache_hits', 'prompt_tokens', 'generation_tokens', 'requests'] as const;
export type ServerCounter = (typeof SERVER_COUNTERS)[number];

/** The deltas `delta` gives each counter, with the hit rate of the prefix-cache ones. */
export function deltasOf(delta: (key: ServerCounter) => number | null): CounterDeltas {
  const queries = delta('prefix_cache_queries');
  const hits = delta('prefix_cache_hits');
  return {
    prefix_cache_queries: queries,
    prefix_cache_hits: hits,
    server_cache_hit_rate: queries !== null && hits !== null && queries > 0 ? hits / queries : null,
    prompt_tokens: delta('prompt_tokens'),
    generation_tokens: delta('generation_tokens'),
    requests: delta('requests'),
  };
}

/** The counters' deltas from `before` to `after` (see CounterDeltas). */
export function counterDeltas(before: ServerMetricsPoint | null, after: ServerMetricsPoint | null): CounterDeltas {
  return deltasOf((key) => (before?.[key] == null || after?.[key] == null ? null : after[key]! - before[key]!));
}

const SCRAPE_TIMEOUT_MS = 3_000;
/** Most samples kept: a long run at the default interval fits, and memory stays bounded. */
export const MAX_SAMPLES = 20_000;

/**
 * Reads a Prometheus `/metrics` page before the run, every `intervalMs` during it and after it. A scrape that fails
 * is counted and skipped; it never fails the run. Every request is bounded by a timeout, and stop() waits for the one
 * in flight, so nothing outlives the run.
 */
export class MetricsScraper {
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #intervalMs: number;
  readonly #series: ServerMetricsSample[] = [];
  #before: ServerMetricsPoint | null = null;
  /** The KV capacity the "before" page stated (vLLM's `vllm:cache_config_info`), if any. */
  #kvCapacity: ServerKvCapacity | undefined;
  #scrapes = 0;
  #failures = 0;
  #lastError: string | null = null;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<ServerMetricsReading | null> | undefined;
  #startMs = 0;
  readonly #engine: EngineName;
  /** Family names of the last page that parsed, for the warning when none of them is known. */
  #lastFamilies: string[] | null = null;
  #anyKnown = false;
  #anyCacheCounter = false;
  /** The scrape's tick (GpuLogSample.tick): 0 before the run, +1 at every interval. */
  #tick = 0;
  /** The GPUs, once a page read shows dcgm-exporter's names. */
  #gpu: GpuPageLog | null = null;

  /**
   * @param url the /metrics page; credentials in it (`http://user:password@host/metrics`) are sent as Basic auth,
   *   over any Authorization in `headers`, and the URL is reported without them.
   * @param options.headers sent with every scrape: the chat client's (its auth included), so /metrics gets the same auth.
   * @param options.engine (from detection) says whose metric names are tried first. @default 'unknown'
   */
  constructor(url: string, options: { intervalMs: number; headers?: Record<string, string>; engine?: EngineName }) {
    const credentials = splitUrlTextCredentials(url);
    this.#url = credentials?.url.href ?? url;
    this.#intervalMs = options.intervalMs;
    this.#headers = { ...options.headers };
    if (credentials?.authorization !== undefined) this.#headers.authorization = credentials.authorization;
    this.#engine = options.engine ?? 'unknown';
  }

  /** The KV capacity the page stated before the run (vLLM's `vllm:cache_config_info`); undefined when it stated none. */
  get kvCapacity(): ServerKvCapacity | undefined {
    return this.#kvCapacity;
  }

  /** Takes the "before" snapshot and starts the periodic scrapes. */
  async start(): Promise<void> {
    this.#startMs = performance.now();
    this.#before = pointOf(await this.#scrape('before'));
    this.#timer = setInterval(() => {
      this.#tick += 1;
      if (this.#inFlight === undefined) void this.#scrape('during');
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops the periodic scrapes, takes the "after" snapshot and reports. */
  async stop(): Promise<ServerMetricsReport> {
    clearInterval(this.#timer);
    await this.#inFlight;
    this.#tick += 1;
    const after = pointOf(await this.#scrape('after'));
    return {
      url: this.#url,
      scrapes: this.#scrapes,
      failures: this.#failures,
      last_error: this.#lastError,
      before: this.#before,
      after,
      ...counterDeltas(this.#before, after),
      engine: this.#engine,
      warning: this.#warning(),
      series: this.#series,
    };
  }

  /** What the page said about its GPUs (dcgm-exporter's names); null when no page read showed them. */
  get gpu(): GpuPageLog | null {
    return this.#gpu;
  }

  /** One sentence when the scrapes gave nothing chatload could read; null otherwise. */
  #warning(): string | null {
    if (this.#anyCacheCounter) return null;
    // A GPU page (no engine's counter on it): its own warnings are the GPU section's (gpu-figures.ts).
    if (this.#gpu !== null && !this.#anyKnown) return null;
    const engine = engineDisplayName(this.#engine);
    if (this.#anyKnown) {
      return `--scrape-metrics: GET ${this.#url} has no prefix-cache counters for ${engine}, so the server's cache hit rate is unknown (the gauges were read)`;
    }
    if (this.#lastFamilies === null) {
      return `--scrape-metrics: every GET ${this.#url} failed (${counted(this.#scrapes, 'try', 'tries')}; last: ${this.#lastError ?? 'no answer'}), so the server's counters are unknown`;
    }
    const seen = metricPrefixes(this.#lastFamilies);
    return (
      `--scrape-metrics: GET ${this.#url} answered but has no metric chatload knows for ${engine} ` +
      `(saw ${seen.length === 0 ? 'no metric' : `prefixes ${seen.join(' ')}`}), so the server's counters are unknown; docs/ENGINES.md lists the names read`
    );
  }

  #scrape(phase: ScrapePhase): Promise<ServerMetricsReading | null> {
    const tick = this.#tick;
    const run = async (): Promise<ServerMetricsReading | null> => {
      this.#scrapes += 1;
      try {
        const sentAt = performance.now();
        const response = await request(this.#url, { headers: this.#headers, signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
        // When the page was made, as well as the client can tell: halfway between the request and its answer's head.
        const madeAt = (sentAt + performance.now()) / 2;
        const text = await response.body.text();
        if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}`);
        const reading = readServerMetrics(text, this.#engine);
        if (phase === 'before') this.#kvCapacity = readKvCapacity(text);
        const snapshot = reading.snapshot;
        this.#lastFamilies = reading.families;
        if (reading.gpu !== null) (this.#gpu ??= new GpuPageLog(this.#url)).add(reading.gpu, tick, phase, madeAt);
        if (Object.values(snapshot).some((v) => v !== null) || reading.prompt_tokens !== null || reading.generation_tokens !== null) this.#anyKnown = true;
        if (snapshot.prefix_cache_queries !== null && snapshot.prefix_cache_hits !== null) this.#anyCacheCounter = true;
        if (this.#series.length < MAX_SAMPLES) {
          this.#series.push({
            t_ms: Math.round(performance.now() - this.#startMs),
            requests_running: snapshot.requests_running,
            requests_waiting: snapshot.requests_waiting,
            kv_cache_usage: snapshot.kv_cache_usage,
          });
        }
        return reading;
      } catch (error) {
        this.#failures += 1;
        this.#lastError = error instanceof Error ? error.message : String(error);
        return null;
      } finally {
        this.#inFlight = undefined;
      }
    };
    this.#inFlight = run();
    return this.#inFlight;
  }
}
