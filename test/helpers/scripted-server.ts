// Loopback HTTP servers for client tests: a scripted one (each test says what to write, when, and how to fail) and
// an OpenAI-compatible one with fixed timing (first token after ttftMs, then one token every itlMs).
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One step of a scripted response, run after the previous one and its own `delayMs` (ms). */
export type ScriptAction =
  | { write: string | Uint8Array; delayMs?: number }
  | { end: true; delayMs?: number }
  /** `reset` sends a TCP RST; `close` a plain FIN without ending the HTTP response. */
  | { destroy: 'reset' | 'close'; delayMs?: number };

/** What the scripted server answers to one request. */
export interface ScriptedResponse {
  /** Wait this long (ms) before sending the status line and headers. */
  headersDelayMs?: number;
  /** Send no status line or headers at all (the request then hangs unless an action destroys the socket). */
  noHeaders?: boolean;
  /** @default 200 */
  status?: number;
  /** @default { 'content-type': 'text/event-stream' } */
  headers?: Record<string, string>;
  /** Run in order. If none ends or destroys the response, it stays open until the server closes. */
  actions?: ScriptAction[];
}

/** A request as the scripted server received it. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The client's port: equal ports mean a reused (keep-alive) connection. */
  remotePort: number;
}

/** A running loopback server: its base URL (`http://127.0.0.1:<port>`), what it received, and how to stop it. */
export interface TestServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Ends every connection and pending timer, then closes the listener. */
  close(): Promise<void>;
}

type Script = ScriptedResponse | ((request: RecordedRequest, index: number) => ScriptedResponse);

/** Starts a server on 127.0.0.1:0 that answers every request as `script` says. */
export async function startScriptedServer(script: Script): Promise<TestServer> {
  const timers = new Set<NodeJS.Timeout>();
  const later = (delayMs: number | undefined, run: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, delayMs ?? 0);
    timers.add(timer);
  };
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void readRequest(req).then((recorded) => {
      const index = requests.push(recorded) - 1;
      const response = typeof script === 'function' ? script(recorded, index) : script;
      runScript(response, res, later);
    });
  });
  return listen(server, requests, () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  });
}

function runScript(response: ScriptedResponse, res: ServerResponse, later: (ms: number | undefined, run: () => void) => void): void {
  const actions = response.actions ?? [];
  const step = (index: number): void => {
    const action = actions[index];
    if (action === undefined) return;
    later(action.delayMs, () => {
      if (res.destroyed) return;
      if ('write' in action) {
        res.write(action.write);
        step(index + 1);
      } else if ('end' in action) {
        res.end();
      } else if (action.destroy === 'reset') {
        res.socket?.resetAndDestroy();
      } else {
        res.socket?.destroy();
      }
    });
  };
  if (response.noHeaders) {
    step(0);
    return;
  }
  later(response.headersDelayMs, () => {
    if (res.destroyed) return;
    res.writeHead(response.status ?? 200, response.headers ?? { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    step(0);
  });
}

/** Formats one SSE event: `data: <json or text>` and a blank line. */
export function sseEvent(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** An OpenAI chat.completion.chunk with one choice carrying `delta` (and `finish_reason` when given). */
export function chunkJson(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The final usage chunk (empty `choices`) that `stream_options.include_usage` asks for. */
export function usageChunkJson(promptTokens: number, completionTokens: number, cachedTokens?: number): Record<string, unknown> {
  const usage: Record<string, unknown> = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (cachedTokens !== undefined) usage.prompt_tokens_details = { cached_tokens: cachedTokens };
  return { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model: 'test-model', choices: [], usage };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Options of {@link startFixedTimingServer}. Times in ms. */
export interface FixedTimingOptions {
  /** From the end of the request body to the first token. */
  ttftMs: number;
  /** Between consecutive tokens. */
  itlMs: number;
  /** Tokens per answer (each token is its own SSE event). */
  tokens: number;
  /** The first `reasoningTokens` tokens go out as `delta.reasoning_content`. @default 0 */
  reasoningTokens?: number;
  /** The model listed at /v1/models. @default 'fixed-timing' */
  model?: string;
  /** `max_model_len` listed at /v1/models. @default 32768 */
  maxModelLen?: number;
}

/** A fixed-timing server: the scripted-server fields plus the parsed chat request bodies it received (first 10,000). */
export interface FixedTimingServer extends TestServer {
  chatBodies: unknown[];
}

/**
 * An OpenAI-compatible server with fixed timing: every chat completion gets its first token `ttftMs` after the request
 * body arrived, then one token every `itlMs` (scheduled from that start, so delays do not accumulate), then a usage
 * chunk and `data: [DONE]`. Headers go out at once, as vLLM does. `stream: false` gets one JSON body after the last
 * token's time. GET /v1/models lists one model. Token text is ` tok<i>`; usage reports `tokens` completion tokens and
 * ceil(characters / 4) prompt tokens.
 */
export async function startFixedTimingServer(options: FixedTimingOptions): Promise<FixedTimingServer> {
  const timers = new Set<NodeJS.Timeout>();
  const model = options.model ?? 'fixed-timing';
  const requests: RecordedRequest[] = [];
  const chatBodies: unknown[] = [];
  const server = createServer((req, res) => {
    void readRequest(req).then((recorded) => {
      const startMs = performance.now();
      if (requests.length < 10_000) requests.push(recorded);
      if (recorded.method === 'GET' && recorded.url.startsWith('/v1/models')) {
        const data = [{ id: model, object: 'model', owned_by: 'chatload', max_model_len: options.maxModelLen ?? 32768 }];
        sendJson(res, 200, { object: 'list', data });
        return;
      }
      if (recorded.method !== 'POST' || !recorded.url.startsWith('/v1/chat/completions')) {
        sendJson(res, 404, { error: { message: `no route ${recorded.method} ${recorded.url}` } });
        return;
      }
      let body: { stream?: unknown; messages?: Array<{ content?: unknown }> };
      try {
        body = JSON.parse(recorded.body) as typeof body;
      } catch {
        sendJson(res, 400, { error: { message: 'body is not JSON' } });
        return;
      }
      if (chatBodies.length < 10_000) chatBodies.push(body);
      const promptChars = (body.messages ?? []).reduce((sum, m) => sum + (typeof m.content === 'string' ? m.content.length : 0), 0);
      const usage = { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: options.tokens, total_tokens: 0 };
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
      const reasoningTokens = options.reasoningTokens ?? 0;
      const at = (i: number): number => startMs + options.ttftMs + i * options.itlMs;
      const schedule = (atMs: number, run: () => void): void => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) run();
        }, Math.max(0, atMs - performance.now()));
        timers.add(timer);
      };
      if (body.stream !== true) {
        schedule(at(Math.max(0, options.tokens - 1)), () => {
          let content = '';
          let reasoning = '';
          for (let i = 0; i < options.tokens; i++) {
            if (i < reasoningTokens) reasoning += ` tok${i}`;
            else content += ` tok${i}`;
          }
          const message: Record<string, unknown> = { role: 'assistant', content };
          if (reasoningTokens > 0) message.reasoning_content = reasoning;
          sendJson(res, 200, {
            id: 'chatcmpl-fixed', object: 'chat.completion', created: 0, model,
            choices: [{ index: 0, message, finish_reason: 'length' }],
            usage,
          });
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      const emit = (i: number): void => {
        if (i >= options.tokens) {
          res.end(sseEvent(usageChunkJson(usage.prompt_tokens, usage.completion_tokens)) + sseEvent('[DONE]'));
          return;
        }
        const delta: Record<string, unknown> = i < reasoningTokens ? { reasoning_content: ` tok${i}` } : { content: ` tok${i}` };
        if (i === 0) delta.role = 'assistant';
        res.write(sseEvent(chunkJson(delta, i === options.tokens - 1 ? 'length' : null)));
        schedule(at(i + 1), () => emit(i + 1));
      };
      schedule(at(0), () => emit(0));
    });
  });
  const base = await listen(server, requests, () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  });
  return { ...base, chatBodies };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readRequest(req: IncomingMessage): Promise<RecordedRequest> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    const done = (): void =>
      resolve({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(parts).toString('utf8'),
        remotePort: req.socket.remotePort ?? 0,
      });
    req.on('end', done);
    req.on('error', done);
  });
}

async function listen(server: Server, requests: RecordedRequest[], onClose: () => void): Promise<TestServer> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 8192 }, resolve));
  const port = (server.address() as { port: number }).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        onClose();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/** A GET /v1/models answer listing `test-model`. */
export const MODELS_RESPONSE: ScriptedResponse = {
  headers: { 'content-type': 'application/json' },
  actions: [{ write: JSON.stringify({ object: 'list', data: [{ id: 'test-model' }] }) }, { end: true }],
};

/** A short streamed answer ("fine thanks", 2 tokens) with usage and [DONE]. */
export const SHORT_ANSWER: ScriptedResponse = {
  actions: [
    { write: sseEvent(chunkJson({ role: 'assistant', content: 'fine' })) },
    { write: sseEvent(chunkJson({ content: ' thanks' }, 'stop')) + sseEvent(usageChunkJson(12, 2)) + sseEvent('[DONE]') },
    { end: true },
  ],
};

/** An HTTP error in OpenAI's JSON shape, with optional extra headers (e.g. retry-after). */
export function jsonStatus(code: number, headers: Record<string, string> = {}): ScriptedResponse {
  return {
    status: code,
    headers: { 'content-type': 'application/json', ...headers },
    actions: [{ write: JSON.stringify({ error: { message: `status ${code}`, type: 'test' } }) }, { end: true }],
  };
}
