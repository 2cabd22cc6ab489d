import type { LoadObserver } from '../load/types.js';
import type { LiveMetrics } from '../live-metrics/index.js';
import type { BenchmarkHooks } from './run-steps.js';

/** A run's hooks with the live metrics in them, and what ends them (nothing when the caller owns them). */
export interface LiveMetricsHooks<H extends BenchmarkHooks> {
  hooks: H;
  close(): Promise<void>;
}

/**
 * --metrics-port: the live metrics `hooks.liveMetrics` names (a caller serving one server across runs: `run --repeat`,
 * `sweep`), or a server of its own started here when the plan asks for one and the caller gave none. Resolves once
 * listening: a port in use rejects (ConfigError, exit 2) before the run does any work.
 */
export async function withLiveMetrics<H extends BenchmarkHooks>(port: number | undefined, hooks: H): Promise<LiveMetricsHooks<H>> {
  if (hooks.liveMetrics !== undefined || port === undefined) return { hooks, close: async () => {} };
  // Loaded only when asked for: prom-client is not needed by a run without --metrics-port (issue 17: start-up).
  const { serveLiveMetrics } = await import('../live-metrics/index.js');
  const served = await serveLiveMetrics(port);
  hooks.onMetricsServing?.(served.server.url);
  return { hooks: { ...hooks, liveMetrics: served.metrics }, close: () => served.close() };
}

/** The run's observer with the live metrics told of each send and, once the Recorder has it on disk, each record. */
export function observerWithMetrics(observer: LoadObserver | undefined, metrics: LiveMetrics | undefined): LoadObserver | undefined {
  if (metrics === undefined) return observer;
  return {
    ...observer,
    onSend: () => {
      metrics.onSend();
      observer?.onSend?.();
    },
    onRecord: (record) => {
      metrics.onRecord(record);
      observer?.onRecord?.(record);
    },
  };
}
