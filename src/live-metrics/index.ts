import { startMetricsServer, type MetricsServer } from './metrics-server.js';
import { LiveMetrics, type RunLabels } from './run-metrics.js';

export { LiveMetrics, type RunLabels } from './run-metrics.js';
export type { MetricsServer } from './metrics-server.js';

/** A run's live metrics and the server that shows them: `close()` ends both. */
export interface ServedMetrics {
  metrics: LiveMetrics;
  server: MetricsServer;
  close(): Promise<void>;
}

/**
 * --metrics-port: the live metrics, served on 127.0.0.1:port/metrics until close(). Rejects with a ConfigError (exit 2)
 * when the port cannot be bound.
 */
export async function serveLiveMetrics(port: number, labels?: RunLabels): Promise<ServedMetrics> {
  const metrics = new LiveMetrics(labels);
  try {
    const server = await startMetricsServer(port, metrics);
    return {
      metrics,
      server,
      async close() {
        await server.close();
        metrics.close();
      },
    };
  } catch (error) {
    metrics.close();
    throw error;
  }
}
