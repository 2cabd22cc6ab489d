import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors/index.js';
import type { LiveMetrics } from './run-metrics.js';

/** The live metrics' HTTP server: where it listens, and how it ends. */
export interface MetricsServer {
  /** The bound port (the one asked for, or the free one chosen for 0). */
  readonly port: number;
  /** http://127.0.0.1:PORT/metrics */
  readonly url: string;
  /** Stops listening and closes every connection, a scraper's idle keep-alive one too. Idempotent. */
  close(): Promise<void>;
}

/** Why a port could not be bound, in words (the errno code kept). */
function listenProblem(error: NodeJS.ErrnoException): string {
  if (error.code === 'EADDRINUSE') return 'the port is in use on 127.0.0.1 (EADDRINUSE)';
  if (error.code === 'EACCES') return 'binding it is not permitted (EACCES: ports below 1024 need privileges)';
  return `${error.code ?? 'error'}: ${error.message}`;
}

/**
 * Serves `metrics` as Prometheus text on 127.0.0.1:port/metrics (issue #32, part 3): GET (or HEAD) /metrics only, 404
 * elsewhere. Resolves once listening; a port that cannot be bound rejects with a one-line ConfigError naming
 * --metrics-port (exit 2), before the run does any work. The server is unref'd: it never keeps the process alive.
 */
export async function startMetricsServer(port: number, metrics: LiveMetrics): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(path === '/metrics' ? 405 : 404, { 'content-type': 'text/plain' }).end(path === '/metrics' ? 'GET only\n' : 'not found: try /metrics\n');
      return;
    }
    metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(error as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new ConfigError(`--metrics-port ${port}: cannot serve the live metrics: ${listenProblem(error)}`, { cause: error }));
    });
    server.listen({ host: '127.0.0.1', port }, () => resolve());
  });
  // Past listen, a server error (rare: clients' own go to 'clientError') must not throw out of the run.
  server.on('error', () => {});
  server.unref();
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    port: bound,
    url: `http://127.0.0.1:${bound}/metrics`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper's keep-alive socket would hold close() open until it timed out.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
