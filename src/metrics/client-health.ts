import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/**
 * How the benchmark client itself fared during a run: if its event loop was late or its CPU busy, its timestamps
 * include its own delay and the server looks slower than it is.
 */
export interface ClientHealth {
  /** How late the event loop ran a timer, beyond the sampling resolution (milliseconds). */
  event_loop_delay_ms: { p50: number; p99: number; max: number; mean: number };
  /** CPU time of this process over the run (milliseconds). */
  cpu_user_ms: number;
  cpu_system_ms: number;
  /** (user + system CPU) / wall time * 100: 100 means one core fully busy. */
  cpu_percent_of_one_core: number;
  /** Wall time between start() and stop() (milliseconds). */
  wall_ms: number;
  /** Peak resident set size of the process (MiB). */
  max_rss_mb: number;
  /**
   * Requests resent at once on a fresh connection because their kept-alive one had been closed by the server before
   * any response byte (not retries, not failures; docs/ENGINES.md). Set by the run from its records.
   */
  stale_connection_resends?: number;
  /** True when a threshold was crossed: the client may have been the bottleneck. */
  bottleneck: boolean;
  /** One sentence per crossed threshold, saying what to do. */
  warnings: string[];
}

/** When the client counts as a possible bottleneck. */
export interface ClientHealthThresholds {
  /** Event-loop delay p99 above this (milliseconds). Default 20. */
  maxEventLoopDelayP99Ms: number;
  /** CPU above this percent of one core. Default 90. */
  maxCpuPercentOfOneCore: number;
}

/** The default thresholds: event-loop delay p99 > 20 ms, or CPU > 90% of one core. */
export const DEFAULT_HEALTH_THRESHOLDS: Readonly<ClientHealthThresholds> = {
  maxEventLoopDelayP99Ms: 20,
  maxCpuPercentOfOneCore: 90,
};

/** The measured part of a ClientHealth, before thresholds are applied. */
export type ClientHealthMeasurement = Omit<ClientHealth, 'bottleneck' | 'warnings' | 'stale_connection_resends'>;

/** Adds the run's stale-connection resend count (summed from its records) to a health reading. */
export function withStaleConnectionResends(health: ClientHealth, resends: number): ClientHealth {
  return { ...health, stale_connection_resends: resends };
}

/** Applies thresholds to a measurement: sets `bottleneck` and writes the warnings. Pure; used by ClientHealthMonitor.stop(). */
export function assessClientHealth(
  measured: ClientHealthMeasurement,
  thresholds: ClientHealthThresholds = DEFAULT_HEALTH_THRESHOLDS,
): ClientHealth {
  const warnings: string[] = [];
  const p99 = measured.event_loop_delay_ms.p99;
  if (p99 > thresholds.maxEventLoopDelayP99Ms) {
    warnings.push(
      `client event-loop delay p99 was ${p99.toFixed(1)} ms (over ${thresholds.maxEventLoopDelayP99Ms} ms): ` +
        'latencies include the client\'s own delay; use fewer clients or a faster machine.',
    );
  }
  const cpu = measured.cpu_percent_of_one_core;
  if (cpu > thresholds.maxCpuPercentOfOneCore) {
    warnings.push(
      `client CPU was ${cpu.toFixed(0)}% of one core (over ${thresholds.maxCpuPercentOfOneCore}%): ` +
        'the client may have been the bottleneck; use fewer clients or a faster machine.',
    );
  }
  return { ...measured, bottleneck: warnings.length > 0, warnings };
}

/** Options of ClientHealthMonitor. */
export interface ClientHealthMonitorOptions {
  /**
   * Sampling period of the event-loop delay timer (milliseconds). Default 10 (Node's default): ~100 wakeups/s costs nothing
   * measurable, and a stall long enough to matter (> 1 ms) still shows.
   */
  resolutionMs?: number;
  thresholds?: Partial<ClientHealthThresholds>;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/**
 * Measures the client's event-loop delay (perf_hooks.monitorEventLoopDelay), CPU (process.cpuUsage) and peak RSS
 * (process.resourceUsage().maxRSS) between start() and stop(). The only part of metrics/ that reads the clock.
 */
export class ClientHealthMonitor {
  readonly #resolutionMs: number;
  readonly #thresholds: ClientHealthThresholds;
  #histogram: IntervalHistogram | null = null;
  #startWallMs = 0;
  #startCpu: NodeJS.CpuUsage | null = null;

  constructor(options: ClientHealthMonitorOptions = {}) {
    this.#resolutionMs = options.resolutionMs ?? 10;
    this.#thresholds = { ...DEFAULT_HEALTH_THRESHOLDS, ...options.thresholds };
  }

  /** Starts measuring. Calling it again restarts the measurement. */
  start(): void {
    this.#histogram?.disable();
    this.#histogram = monitorEventLoopDelay({ resolution: this.#resolutionMs });
    this.#histogram.enable();
    this.#startCpu = process.cpuUsage();
    this.#startWallMs = performance.now();
  }

  /** Stops measuring and returns what was measured since start(). Throws if start() was not called. */
  stop(): ClientHealth {
    const histogram = this.#histogram;
    const startCpu = this.#startCpu;
    if (histogram === null || startCpu === null) throw new Error('ClientHealthMonitor.stop() called before start()');
    histogram.disable();
    this.#histogram = null;
    const wallMs = performance.now() - this.#startWallMs;
    const cpu = process.cpuUsage(startCpu);
    // The histogram records the whole interval between timer runs (nanoseconds), resolution included; the delay is the excess.
    const excessMs = (ns: number): number => round3(Math.max(0, ns / 1e6 - this.#resolutionMs));
    const sampled = histogram.count > 0;
    const cpuUserMs = cpu.user / 1000;
    const cpuSystemMs = cpu.system / 1000;
    return assessClientHealth(
      {
        event_loop_delay_ms: {
          p50: sampled ? excessMs(histogram.percentile(50)) : 0,
          p99: sampled ? excessMs(histogram.percentile(99)) : 0,
          max: sampled ? excessMs(histogram.max) : 0,
          mean: sampled ? excessMs(histogram.mean) : 0,
        },
        cpu_user_ms: round3(cpuUserMs),
        cpu_system_ms: round3(cpuSystemMs),
        cpu_percent_of_one_core: wallMs > 0 ? round3(((cpuUserMs + cpuSystemMs) / wallMs) * 100) : 0,
        wall_ms: round3(wallMs),
        // maxRSS is in kilobytes (KiB).
        max_rss_mb: round3(process.resourceUsage().maxRSS / 1024),
      },
      this.#thresholds,
    );
  }
}
