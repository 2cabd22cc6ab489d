// The shared part of the per-engine test servers (engine-servers.ts): a loopback node:http server that answers chat
// completions with a short streamed answer and usage, counts the tokens it "served" the way an engine's counters
// would, records every request, and hands every other route to the engine's own handler.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { chunkJson, sseEvent, usageChunkJson } from './scripted-server.js';

/** What the server has served so far (tokens), from which each engine renders its /metrics counters. */
export interface ServedCounts {
  requests: number;
  /** Prompt tokens of every request (cached ones included). */
  promptTokens: number;
  /** The cached share of them. */
  cachedTokens: number;
  generatedTokens: number;
}

/** A request as the engine server received it. */
export interface EngineRequest {
  method: string;
  /** Path and query, e.g. `/slots/0?action=erase`. */
  url: string;
  body: string;
}

/** A running engine test server. */
export interface EngineServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request in arrival order. */
  requests: EngineRequest[];
  /** What it has served; tests compare /metrics deltas with it. */
  served: ServedCounts;
  close(): Promise<void>;
}

/** Options every engine server takes. */
export interface EngineServerOptions {
  /** The model it lists and serves. @default 'test-model' */
  model?: string;
  /** Usage of every answer: prompt tokens and the cached part of them. @default 100 and 40 */
  promptTokens?: number;
  cachedTokens?: number;
  /** Report `prompt_tokens_details.cached_tokens` in usage. @default true */
  reportCached?: boolean;
}

/** An engine's own routes: answer and return true, or return false for a 404. */
export type EngineRoutes = (request: EngineRequest, res: ServerResponse, served: ServedCounts) => boolean;

/** Writes a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Writes a text answer (Prometheus pages are `text/plain; version=0.0.4`). */
export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Starts an engine server on 127.0.0.1:0. `POST /v1/chat/completions` streams "Hello there" with usage (or answers
 * JSON when `stream` is false) and adds to `served`; every other request goes to `routes`; what they leave is a 404.
 * `headers` go on every answer (e.g. llama.cpp's `Server: llama.cpp`).
 */
export async function startEngineServer(options: EngineServerOptions, routes: EngineRoutes, headers: Record<string, string> = {}): Promise<EngineServer> {
  const model = options.model ?? 'test-model';
  const prompt = options.promptTokens ?? 100;
  const cached = options.cachedTokens ?? 40;
  const served: ServedCounts = { requests: 0, promptTokens: 0, cachedTokens: 0, generatedTokens: 0 };
  const requests: EngineRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: EngineRequest = { method: req.method ?? 'GET', url: req.url ?? '/', body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      if (request.method === 'POST' && request.url.startsWith('/v1/chat/completions')) {
        served.requests += 1;
        served.promptTokens += prompt;
        served.cachedTokens += cached;
        served.generatedTokens += 2;
        const usage = usageChunkJson(prompt, 2, options.reportCached === false ? undefined : cached);
        if ((JSON.parse(request.body) as { stream?: unknown }).stream === false) {
          const message = { role: 'assistant', content: 'Hello there' };
          sendJson(res, 200, { id: 'chatcmpl-e', object: 'chat.completion', created: 0, model, choices: [{ index: 0, message, finish_reason: 'stop' }], usage: usage.usage });
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          sseEvent({ ...chunkJson({ role: 'assistant', content: 'Hello' }), model }) +
            sseEvent({ ...chunkJson({ content: ' there' }, 'stop'), model }) +
            sseEvent({ ...usage, model }) +
            sseEvent('[DONE]'),
        );
        return;
      }
      if (!routes(request, res, served)) sendJson(res, 404, { detail: 'Not Found' });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const port = (server.address() as { port: number }).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    served,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/** Prometheus text for one metric family: `# HELP`, `# TYPE` and its samples (`name{labels} value` lines). */
export function family(name: string, type: 'counter' | 'gauge' | 'histogram', help: string, samples: readonly string[]): string {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples].join('\n') + '\n';
}
