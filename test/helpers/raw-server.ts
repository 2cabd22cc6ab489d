// A raw TCP test server on 127.0.0.1:0, for what an HTTP library will not produce: a peer that accepts and never
// reads, a response cut inside its Content-Length, an endless body, garbage instead of a status line. Each request's
// head (and Content-Length body) is parsed just enough to know which route was asked for; the test's handler then
// writes whatever bytes it likes to the socket.
import { createServer, type Server, type Socket } from 'node:net';

/** One HTTP request as the raw server parsed it (method, path and the body announced by Content-Length). */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * What to do with one request: write bytes to `socket` (and end or destroy it) when you like. Timers must be made
 * through `later` so that close() can cancel them. Returning without writing leaves the request unanswered.
 */
export type RawHandler = (request: RawRequest, socket: Socket, later: (delayMs: number, run: () => void) => void) => void;

/** A running raw server. */
export interface RawServer {
  url: string;
  port: number;
  /** Every request parsed so far, in arrival order. */
  requests: RawRequest[];
  /** Connections accepted so far (including ones that never sent a full request). */
  readonly connections: number;
  /** Stops listening (new connections are refused) but keeps open sockets. */
  stopListening(): Promise<void>;
  /** Destroys every socket and timer and closes the listener. */
  close(): Promise<void>;
}

/** Options of {@link startRawServer}. */
export interface RawServerOptions {
  /** Do not read from accepted sockets at all: requests are never parsed and the handler never runs. */
  neverRead?: boolean;
}

/** A complete HTTP/1.1 response with a JSON body and Content-Length; `extraHeaders` are `Name: value` lines. */
export function httpJson(status: number, body: unknown, extraHeaders: readonly string[] = []): string {
  const text = JSON.stringify(body);
  return [`HTTP/1.1 ${status} X`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(text)}`, ...extraHeaders, '', text].join('\r\n');
}

/** The head of a 200 SSE response without Content-Length, closed by the server (read until the connection ends). */
export const SSE_HEAD_CLOSE_DELIMITED = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n';

/** The /v1/models answer every run needs before it starts (model `raw-model`). */
export function modelsResponse(): string {
  return httpJson(200, { object: 'list', data: [{ id: 'raw-model', object: 'model' }] });
}

/** Starts the raw server. `handler` runs once per parsed request (keep-alive connections may carry several). */
export async function startRawServer(handler: RawHandler, options: RawServerOptions = {}): Promise<RawServer> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const requests: RawRequest[] = [];
  let connections = 0;
  const later = (delayMs: number, run: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, delayMs);
    timers.add(timer);
  };
  const server: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (options.neverRead) {
      socket.pause();
      return;
    }
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const parsed = parseRequest(buffer);
        if (parsed === undefined) return;
        buffer = buffer.subarray(parsed.consumed);
        requests.push(parsed.request);
        handler(parsed.request, socket, later);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const port = (server.address() as { port: number }).port;
  let closing: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  const stopListening = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => server.close(() => resolve()));
    return stopped;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return connections;
    },
    stopListening,
    close(): Promise<void> {
      closing ??= (async () => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        for (const socket of sockets) socket.destroy();
        await stopListening();
      })();
      return closing;
    },
  };
}

/** Parses one request from the front of `buffer`, or undefined when it is not complete yet. */
function parseRequest(buffer: Buffer): { request: RawRequest; consumed: number } | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const lines = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
  const [method = '', path = ''] = (lines[0] ?? '').split(' ');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const bodyStart = headEnd + 4;
  if (buffer.length < bodyStart + length) return undefined;
  const body = buffer.subarray(bodyStart, bodyStart + length).toString('utf8');
  return { request: { method, path, headers, body }, consumed: bodyStart + length };
}
