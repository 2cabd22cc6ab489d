import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ChatloadError, ConfigError } from '../errors/index.js';
import { defaultTokenCounter, encodeIdsYielding, letLoopGo, type TokenCounter } from '../tokenizer/index.js';
import type { SimConfig } from './config.js';
import { SchedulerRejection, PROMPT_HASH_STEP_IDS, promptHashYielding, resolveOutputBudget } from './scheduler.js';
import { Exchange } from './request-exchange.js';
import { FaultInjector, type FaultRule } from './faults.js';
import { HttpError, readJsonBody, sendError, sendJson } from './http-util.js';
import { wordVocabulary } from './words.js';
import type { RouterKind } from '../options/values/replicas.js';
import { SimReplica } from './replica.js';
import { replicaPage, routerPage, type MetricsPage } from './replica-pages.js';
import { Router } from './router.js';
import { Rng } from '../util/rng.js';
import { encodeSimMessages, encodeSimMessagesYielding, type MediaTokens } from './prompt-tokens.js';
import { parseGenerationBody, parseResponsesBody, piecesAtFor, type GenerationParams, type SimMessage } from './request-parse.js';
import { ResponseStore } from './response-store.js';
import type { TraceLine } from './request-trace.js';
import { TraceWriter } from './request-trace.js';

/** Everything the HTTP server needs, already validated. */
export interface SimServerOptions {
  host: string;
  port: number;
  config: SimConfig;
  seed: number;
  faults: readonly FaultRule[];
  tracePath: string | undefined;
  modelName: string;
  /** chatload's version, for GET /version. */
  version: string;
  /** Counts prompt tokens (chat template applied to `messages`). @default defaultTokenCounter (approximate, ChatML) */
  counter?: TokenCounter;
  /** Simulated engines behind the one port, 1..MAX_REPLICAS. @default 1 */
  replicas?: number;
  /** How the router picks a replica for each request. @default 'round-robin' */
  router?: RouterKind;
}

/**
 * The header naming the replica that served a response, its index in decimal from 0 (issue #31). A contract:
 * chatload's client reads it to learn each request's replica.
 */
export const REPLICA_HEADER = 'x-chatload-replica';

/**
 * The simulator's HTTP server (node:http): a router in front of `replicas` simulated engines (SimReplica: a Scheduler
 * driven by the real clock, its KV cache, its metrics), one event loop for all. What is shared sits here, in front of
 * the replicas: the fault draw, the Responses API's store, the tool-call draw and the trace (docs/SIMULATOR.md).
 */
export class SimServer {
  readonly modelName: string;
  readonly replicas: readonly SimReplica[];
  readonly router: Router;
  readonly #options: SimServerOptions;
  readonly #counter: TokenCounter;
  readonly #server: Server;
  readonly #faults: FaultInjector;
  readonly #trace: TraceWriter | null;
  /** X-Session-ID of each exchange, for the trace (clients send it with --send-conversation-id). */
  readonly #sessions = new WeakMap<Exchange, string | null>();
  readonly #exchanges = new Set<Exchange>();
  /** The Responses API's stored responses, for previous_response_id. */
  readonly #responses: ResponseStore;
  readonly #created = Math.floor(Date.now() / 1000);
  #nextId = 0;
  #port = 0;
  /** Draws which requests with `tools` are answered with a tool call (seeded, apart from the faults' stream). */
  readonly #toolRng: Rng;
  #closing: Promise<void> | null = null;

  private constructor(options: SimServerOptions, trace: TraceWriter | null) {
    this.#options = options;
    this.#counter = options.counter ?? defaultTokenCounter;
    this.modelName = options.modelName;
    const vocabulary = wordVocabulary(this.#counter.tokenizer);
    const done = (exchange: Exchange, line: TraceLine): void => this.#done(exchange, line);
    this.replicas = Array.from({ length: options.replicas ?? 1 }, (_, index) => new SimReplica({ index, config: options.config, seed: options.seed, modelName: options.modelName, vocabulary, done }));
    this.router = new Router(options.router ?? 'round-robin', this.replicas, { seed: options.seed, blockSize: options.config.block_size });
    this.#faults = new FaultInjector(options.faults, options.seed);
    this.#toolRng = Rng.derive(options.seed ?? 0, 0x746f6f6c);
    this.#responses = new ResponseStore(options.config.responses_store_size);
    this.#trace = trace;
    this.#server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (error instanceof HttpError) sendError(res, error);
        else sendError(res, new HttpError(500, `simulator error: ${(error as Error).message}`));
      });
    });
    // Many clients hold idle keep-alive sockets; never time requests out on the server side.
    this.#server.requestTimeout = 0;
    this.#server.headersTimeout = 0;
  }

  /** Starts listening. Rejects with a ChatloadError naming host:port when the port cannot be bound. */
  static async start(options: SimServerOptions): Promise<SimServer> {
    const trace = options.tracePath === undefined ? null : new TraceWriter(options.tracePath);
    if (trace !== null) await trace.ready();
    const sim = new SimServer(options, trace);
    try {
      await new Promise<void>((resolve, reject) => {
        sim.#server.once('error', reject);
        // backlog 8192: the default 511 caused SYN retransmits (seconds of fake TTFT) at 4,000 connections.
        sim.#server.listen({ host: options.host, port: options.port, backlog: 8192 }, () => {
          sim.#server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      for (const replica of sim.replicas) replica.close();
      await trace?.close();
      throw new ChatloadError(`the simulator cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`, {
        cause: error,
        hint: (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'the port is in use: pick another with --port (0 = any free port)' : undefined,
      });
    }
    sim.#port = (sim.#server.address() as AddressInfo).port;
    return sim;
  }

  /** The bound port. */
  get port(): number {
    return this.#port;
  }

  /** Base URL, e.g. http://127.0.0.1:8000 (IPv6 hosts bracketed). */
  get url(): string {
    const host = this.#options.host.includes(':') ? `[${this.#options.host}]` : this.#options.host;
    return `http://${host}:${this.#port}`;
  }

  /** Stops accepting, ends open responses, stops the engine, flushes the trace. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      for (const exchange of [...this.#exchanges]) exchange.shutdown();
      for (const replica of this.replicas) replica.stop();
      this.#server.closeAllConnections();
      await closed;
      for (const replica of this.replicas) replica.close();
      await this.#trace?.close();
    })();
    return this.#closing;
  }

  /** An exchange ended on a replica (its line names the replica). */
  #done(exchange: Exchange, line: TraceLine): void {
    this.#exchanges.delete(exchange);
    this.#trace?.write({ ...line, session_id: this.#sessions.get(exchange) ?? null });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivalMs = performance.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    const replicaPath = REPLICA_METRICS_PATH.exec(path);
    if (replicaPath !== null) return this.#replicaMetrics(req, res, replicaPath[1]!);
    const route = ROUTES[path];
    if (route === undefined) throw new HttpError(404, `Route ${method} ${path} not found.`);
    if (route !== method) {
      req.resume();
      throw new HttpError(405, `Method ${method} not allowed on ${path}; use ${route}.`, { headers: { allow: route } });
    }
    switch (path) {
      case '/v1/chat/completions':
        return this.#generate(req, res, 'chat', arrivalMs);
      case '/v1/completions':
        return this.#generate(req, res, 'completion', arrivalMs);
      case '/v1/responses':
        return this.#generate(req, res, 'responses', arrivalMs);
      case '/v1/models':
        return sendJson(res, 200, {
          object: 'list',
          data: [{ id: this.modelName, object: 'model', created: this.#created, owned_by: 'chatload', max_model_len: this.#options.config.max_model_len }],
        });
      case '/health':
        res.writeHead(200, { 'content-length': 0 });
        return void res.end();
      case '/version':
        return sendJson(res, 200, { version: this.#options.version });
      case '/tokenize':
        return this.#tokenize(req, res);
      case '/reset_prefix_cache':
        req.resume();
        for (const replica of this.replicas) replica.scheduler.resetPrefixCache();
        res.writeHead(200, { 'content-length': 0 });
        return void res.end();
      case '/metrics':
        return sendPage(res, await routerPage(this.replicas));
    }
  }

  /** GET /replicas/<i>/metrics: replica i's own page (404 past the last replica). */
  async #replicaMetrics(req: IncomingMessage, res: ServerResponse, index: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'GET') {
      req.resume();
      throw new HttpError(405, `Method ${method} not allowed on ${req.url ?? ''}; use GET.`, { headers: { allow: 'GET' } });
    }
    const replica = this.replicas[Number(index)];
    if (replica === undefined) throw new HttpError(404, `No replica ${index}: this simulator runs ${this.replicas.length} (0 to ${this.replicas.length - 1}).`);
    sendPage(res, await replicaPage(replica));
  }

  #checkModel(model: string | undefined): void {
    if (model !== undefined && model !== this.modelName) {
      throw new HttpError(404, `The model \`${model}\` does not exist.`, { param: 'model' });
    }
  }

  async #tokenize(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonBody(req);
    if (body === null || typeof body !== 'object') throw new HttpError(400, 'The request body must be a JSON object');
    const b = body as Record<string, unknown>;
    this.#checkModel(typeof b.model === 'string' ? b.model : undefined);
    let tokens: number[];
    if (typeof b.prompt === 'string') tokens = this.#counter.tokenizer.encode(b.prompt);
    else if (b.messages !== undefined) {
      const { messages, tools } = parseGenerationBody({ messages: b.messages, tools: b.tools }, 'chat');
      tokens = this.#encodeChat(messages!, tools);
    } else throw new HttpError(400, "Send 'prompt' (a string) or 'messages'", { param: 'prompt' });
    sendJson(res, 200, { count: tokens.length, max_model_len: this.#options.config.max_model_len, tokens });
  }

  /** What an image and a second of audio stand for in prompt tokens (the config's tokens_per_image, tokens_per_audio_second). */
  #mediaTokens(): MediaTokens {
    const { tokens_per_image: tokensPerImage, tokens_per_audio_second: tokensPerAudioSecond } = this.#options.config;
    return { tokensPerImage, tokensPerAudioSecond };
  }

  /** The prompt ids of a chat request. A chat template that rejects the messages is the client's error: 400, as vLLM. */
  #encodeChat(messages: readonly SimMessage[], tools: readonly unknown[] | undefined): number[] {
    try {
      return encodeSimMessages(this.#counter, messages, this.#mediaTokens(), tools);
    } catch (error) {
      if (error instanceof ConfigError) throw new HttpError(400, error.message, { param: 'messages' });
      throw error;
    }
  }

  /** #encodeChat in slices that let the loop go: a 3 MB prompt held every other stream for seconds (issue #14). */
  async #encodeChatYielding(messages: readonly SimMessage[], tools: readonly unknown[] | undefined): Promise<ArrayLike<number>> {
    try {
      return await encodeSimMessagesYielding(this.#counter, messages, this.#mediaTokens(), tools);
    } catch (error) {
      if (error instanceof ConfigError) throw new HttpError(400, error.message, { param: 'messages' });
      throw error;
    }
  }

  /** The tool the answer calls (one of the request's, at `tool_call_rate`), or null for a text answer. */
  #drawToolCall(names: readonly string[]): string | null {
    if (names.length === 0 || !this.#toolRng.chance(this.#options.config.tool_call_rate)) return null;
    return names[this.#toolRng.int(0, names.length - 1)]!;
  }

  /**
   * A Responses API request as a generation: the stored history of its previous_response_id (400
   * previous_response_not_found when unknown or dropped, as OpenAI answers) before its own input, and, with `store`,
   * a function that keeps the answered history under this response's id.
   */
  #responsesRequest(body: unknown, id: string): { params: GenerationParams; onAnswer?: (content: string) => void } {
    const params = parseResponsesBody(body);
    let messages: SimMessage[] = params.messages;
    if (params.previousResponseId !== undefined) {
      const held = this.#responses.get(params.previousResponseId);
      if (held === undefined) {
        throw new HttpError(400, `Previous response with id '${params.previousResponseId}' not found.`, {
          type: 'invalid_request_error',
          param: 'previous_response_id',
          code: 'previous_response_not_found',
        });
      }
      messages = [...held, ...messages];
    }
    if (!params.store) return { params: { ...params, messages } };
    return { params: { ...params, messages }, onAnswer: (content) => this.#responses.set(id, [...messages, { role: 'assistant', content }]) };
  }

  async #generate(req: IncomingMessage, res: ServerResponse, kind: 'chat' | 'completion' | 'responses', arrivalMs: number): Promise<void> {
    const sessionHeader = req.headers['x-session-id'];
    const sessionId = typeof sessionHeader === 'string' ? sessionHeader : null;
    const serial = this.#nextId++;
    const id = kind === 'responses' ? `resp_sim${this.#port}x${serial}` : `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-sim-${this.#port}-${serial}`;
    let promptTokens = 0;
    let outcome = 'rejected';
    let replica: SimReplica | null = null;
    try {
      const body = await readJsonBody(req, piecesAtFor(kind));
      const { params, onAnswer } = kind === 'responses' ? this.#responsesRequest(body, id) : { params: parseGenerationBody(body, kind), onAnswer: undefined };
      this.#checkModel(params.model);
      // Encoded in slices that let the loop go: a 3 MB prompt held every other stream for seconds (issue #14).
      const promptIds = params.messages !== null ? await this.#encodeChatYielding(params.messages, params.tools) : await encodeIdsYielding(this.#counter.tokenizer, params.prompt!);
      promptTokens = promptIds.length;
      if (promptIds.length === 0) throw new HttpError(400, 'The prompt is empty.', { param: 'prompt' });
      const budget = resolveOutputBudget(this.#options.config, promptIds.length, params.maxTokens);
      if ('error' in budget) throw new HttpError(400, budget.error);
      // A long prompt's hash in steps that let the loop go, before submit (issue #14); a short one is hashed there.
      const hash = promptIds.length > PROMPT_HASH_STEP_IDS ? await promptHashYielding(promptIds, letLoopGo) : undefined;
      // From here the replica answers: its errors (faults, a full queue) carry its header too.
      replica = this.replicas[await this.router.pickYielding({ sessionId, promptIds }, letLoopGo)]!;
      res.setHeader(REPLICA_HEADER, String(replica.index));
      const fault = this.#faults.draw();
      if (fault?.kind === '500' || fault?.kind === '429') {
        outcome = `fault:${fault.kind}`;
        if (fault.kind === '500') throw new HttpError(500, 'Injected fault: internal server error.');
        throw new HttpError(429, 'Injected fault: rate limited.', { headers: { 'retry-after': String(fault.param) } });
      }
      // Only chat answers call tools (the Responses API's function-call items are not simulated).
      const toolCall = kind === 'chat' ? this.#drawToolCall(params.toolNames) : null;
      const exchange = new Exchange(replica, res, { id, kind, stream: params.stream, includeUsage: params.includeUsage, promptTokens, arrivalMs, fault, toolCall, onAnswer });
      this.#sessions.set(exchange, sessionId);
      if (fault?.kind === 'stall') {
        // 200 and headers, then silence until the client goes away.
        this.#exchanges.add(exchange);
        exchange.begin(null);
        exchange.openStream();
        return;
      }
      const spec = {
        promptIds,
        // Fresh from the encoder and held by nothing else: the engine keeps it rather than copying it.
        ownIds: true,
        promptHash: hash,
        maxTokens: budget.budget,
        minTokens: params.minTokens,
        ignoreEos: params.ignoreEos,
        temperature: params.temperature,
        seed: params.seed,
      };
      let engineReq;
      try {
        engineReq = replica.scheduler.submit(spec, exchange);
      } catch (error) {
        if (error instanceof SchedulerRejection) throw new HttpError(error.status, error.message);
        throw error;
      }
      this.#exchanges.add(exchange);
      exchange.begin(engineReq);
      if (params.stream) exchange.openStream();
    } catch (error) {
      const status = error instanceof HttpError ? error.status : 500;
      const nowMs = performance.timeOrigin + performance.now();
      this.#trace?.write({
        id,
        arrival_ms: performance.timeOrigin + arrivalMs,
        first_token_ms: null,
        tokens_written: 0,
        end_ms: nowMs,
        prompt_tokens: promptTokens,
        cached_tokens: 0,
        status,
        outcome,
        session_id: sessionId,
        replica: replica?.index ?? null,
      });
      throw error;
    }
  }
}

/** Sends a Prometheus page. */
function sendPage(res: ServerResponse, page: MetricsPage): void {
  res.writeHead(200, { 'content-type': page.contentType, 'content-length': Buffer.byteLength(page.text) });
  res.end(page.text);
}

/** `/replicas/<i>/metrics`: one replica's Prometheus page. */
const REPLICA_METRICS_PATH = /^\/replicas\/(\d{1,6})\/metrics$/;

/** Known paths and their method. */
const ROUTES: Readonly<Record<string, string>> = {
  '/v1/chat/completions': 'POST',
  '/v1/completions': 'POST',
  '/v1/responses': 'POST',
  '/v1/models': 'GET',
  '/health': 'GET',
  '/version': 'GET',
  '/tokenize': 'POST',
  '/reset_prefix_cache': 'POST',
  '/metrics': 'GET',
};
