import type { LookupFunction } from 'node:net';
import { onAbort } from '../util/abort-listeners.js';
import { headerSecrets } from '../util/redact-text.js';
import { holdsHeaderControl } from '../util/control-chars.js';
import { Agent, dispatch, request, type AgentOptions } from '../util/undici.js';
import { ConfigError } from '../errors/index.js';
import { classifyNetworkError, sanitizeMessage } from './classify-error.js';
import { Exchange } from './exchange.js';
import { readBodyExcerpt } from './read-body.js';
import { normalizeBaseUrl, sendableBody } from './request-body.js';
import { ENDPOINTS, type ApiEndpoint, type EndpointName } from './endpoints/index.js';
import { ResponseCollector } from './response-collector.js';
import { readResponseHead, type HeadContext } from './response-head.js';
import { errorMessageOf, excerpt } from './error-body.js';
import { splitUrlCredentials, splitUrlTextCredentials } from './url-credentials.js';
import { RequestTimer } from './request-timer.js';
import { readinessNetworkError, readinessStatusError, waitUntilReady } from './readiness.js';
import { DrainingResponses } from './draining.js';
import { staleConnectionFailure, watchConnectionReuse, type StaleConnectionFailure } from './stale-connections.js';
import type { TimeoutKind } from './request-timer.js';
import type { ChatRequest, RequestError, StreamResult } from './types.js';
import { parseModels, plainBody, readText, type ModelInfo, type ServerAnswer } from './server-answers.js';

export type { ModelInfo } from './server-answers.js';

/** Options of a {@link ChatClient}. Times are milliseconds. */
export interface ChatClientOptions {
  /**
   * Server base URL, e.g. `http://127.0.0.1:8000`; a trailing `/v1` is accepted and stripped. Credentials in it
   * (`http://user:password@host`) are sent as `Authorization: Basic` with every request and shown nowhere.
   */
  baseUrl: string;
  /**
   * Sent as `Authorization: Bearer <key>`, unless the URL carries credentials (`http://user:password@host`: sent as
   * Basic auth, as curl does) or `headers` has an Authorization. Never logged and never put in an error message.
   */
  apiKey?: string;
  /** Extra request headers (`--header`); names are case-insensitive and override the defaults and the auth above. */
  headers?: Readonly<Record<string, string>>;
  /** Connections per origin in the undici Agent (size it to the concurrency); keep-alive, pipelining 1. */
  connections: number;
  /** Total time for one request (timeout_total). */
  requestTimeoutMs: number;
  /** No first token within this (timeout_ttft). @default requestTimeoutMs */
  ttftTimeoutMs?: number;
  /** Longest silence between network reads once the headers arrived (timeout_idle). @default requestTimeoutMs */
  idleTimeoutMs?: number;
  /** Host name resolver for the sockets (tests use it to fail DNS without sending a query). @default dns.lookup */
  lookup?: LookupFunction;
  /** The API `send` speaks (--endpoint): chat completions, the Responses API, or completions. @default 'chat' */
  endpoint?: EndpointName;
  /**
   * Response headers that name the replica behind a router that served a request (lower-case, tried in order): the
   * first one present is `StreamResult.replica` (client/replica-header.ts). @default none
   */
  replicaHeaders?: readonly string[];
}

/**
 * A stale connection found idle for less than this (ms) means the server closes connections right after its
 * responses (llama-server after every stream), not at a keep-alive timeout (seconds: 5 s in cpp-httplib and uvicorn,
 * 75 s in nginx). Such a server gets a fresh connection per chat request from then on.
 */
const CLOSES_AFTER_RESPONSE_IDLE_MS = 1_000;

/** The reason a request we stopped is aborted with (a timeout or the caller's signal); its error says which. */
class RequestStopped extends Error {
  constructor(kind: TimeoutKind | 'aborted') {
    super(`request stopped: ${kind}`);
    this.name = 'RequestStopped';
  }
}

/** How the client used keep-alive connections during a run. */
export interface ConnectionReuse {
  /** Requests resent at once on a fresh connection after their reused one turned out closed (not retries). */
  staleConnectionResends: number;
  /** False once the server was seen closing connections right after its responses: each request then opens its own. */
  reuseConnections: boolean;
}

/**
 * An OpenAI-compatible chat completions client over one undici Agent. `send` never rejects: every failure is data
 * in `result.error`, with the partial content and timestamps kept.
 */
export class ChatClient {
  readonly #agent: Agent;
  /** The pool's drained responses and requests in flight: a request cuts a drained connection rather than wait for it. */
  readonly #draining: DrainingResponses;
  /** Opens one connection per request (pipelining 0: `connection: close`). Made on first need. */
  #freshAgent: Agent | undefined;
  readonly #agentOptions: AgentOptions;
  readonly #apiKeyReplacedByUrl: boolean;
  readonly #reuse: ConnectionReuse = { staleConnectionResends: 0, reuseConnections: true };
  readonly #endpoint: ApiEndpoint;
  /** Where requests go: the endpoint's path under the base URL, as undici's dispatch() takes it (parsed once). */
  readonly #origin: string;
  readonly #generatePath: string;
  readonly #modelsUrl: string;
  /** The base URL as shown in messages (no credentials). */
  readonly #displayUrl: string;
  readonly #headers: Record<string, string>;
  /** The same without content-type, for GET requests. */
  readonly #getHeaders: Record<string, string>;
  /** Strings redacted from every error message: the api key, the URL's credentials and any extra header value. */
  readonly #secrets: string[];
  readonly #limits: { totalMs: number; ttftMs: number; idleMs: number };
  readonly #requestTimeoutMs: number;
  /** What reading a response's head needs of the client (response-head.ts). */
  readonly #head: HeadContext;
  #modelsAnswer: ServerAnswer | undefined;

  /** Creates the connection pool (ConfigError on a URL that is not http(s); the limits must be positive). */
  constructor(options: ChatClientOptions) {
    const parsed = normalizeBaseUrl(options.baseUrl);
    if (parsed === undefined) {
      const secrets = splitUrlTextCredentials(options.baseUrl)?.secrets ?? [];
      throw new ConfigError(`not an http(s) URL: ${sanitizeMessage(JSON.stringify(options.baseUrl), secrets)}`);
    }
    // Credentials in the URL go as Basic auth, as curl sends them, and never into a URL we request or show.
    const credentials = splitUrlCredentials(parsed);
    const base = credentials.url;
    const root = `${base.origin}${base.pathname.replace(/\/+$/, '')}`;
    this.#endpoint = ENDPOINTS[options.endpoint ?? 'chat'];
    if (this.#endpoint === undefined) throw new ConfigError(`ChatClient: unknown endpoint ${JSON.stringify(options.endpoint)}; known: ${Object.keys(ENDPOINTS).join(', ')}`);
    const generateUrl = new URL(`${root}${this.#endpoint.path}`);
    this.#origin = generateUrl.origin;
    this.#generatePath = `${generateUrl.pathname}${generateUrl.search}`;
    this.#modelsUrl = `${root}/v1/models`;
    this.#displayUrl = root;
    // The run options' schema validated the timeouts (the plan's deadlines part): one cheap guard for library callers.
    if (!(options.connections > 0 && options.requestTimeoutMs > 0 && (options.ttftTimeoutMs ?? 1) > 0 && (options.idleTimeoutMs ?? 1) > 0)) {
      throw new ConfigError('ChatClient: connections and timeouts must be positive numbers');
    }
    this.#requestTimeoutMs = options.requestTimeoutMs;
    this.#limits = {
      totalMs: options.requestTimeoutMs,
      ttftMs: options.ttftTimeoutMs ?? options.requestTimeoutMs,
      idleMs: options.idleTimeoutMs ?? options.requestTimeoutMs,
    };
    // Identity: undici never decodes a compressed body, and the SSE timestamps are taken on the bytes as they come.
    const headers: Record<string, string> = { 'content-type': 'application/json', 'accept-encoding': 'identity' };
    this.#secrets = [...credentials.secrets, ...(credentials.authorization === undefined ? [] : headerSecrets(credentials.authorization))];
    if (options.apiKey !== undefined && options.apiKey.length > 0) {
      headers.authorization = `Bearer ${options.apiKey}`;
      this.#secrets.unshift(options.apiKey, ...headerSecrets(headers.authorization));
    }
    // The URL's own credentials name this server; a key may come from OPENAI_API_KEY set for another one.
    if (credentials.authorization !== undefined) headers.authorization = credentials.authorization;
    // --header last: a header given by name wins over every default, as in curl.
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      headers[name.toLowerCase()] = value;
      this.#secrets.push(...headerSecrets(value));
    }
    // undici refuses such a header on every request, and a GET with one never settled (issue #34): refused here, unshown.
    for (const [name, value] of Object.entries(headers)) {
      if (holdsHeaderControl(value)) throw new ConfigError(`the ${name} header holds a control character (a line break?): give its value alone`);
    }
    this.#headers = headers;
    this.#head = { replicaHeaders: (options.replicaHeaders ?? []).map((name) => name.toLowerCase()), secrets: this.#secrets, endpoint: this.#endpoint };
    this.#apiKeyReplacedByUrl =
      options.apiKey !== undefined && options.apiKey.length > 0 && credentials.authorization !== undefined && headers.authorization === credentials.authorization;
    const { 'content-type': _contentType, ...getHeaders } = headers;
    this.#getHeaders = getHeaders;
    this.#agentOptions = {
      connections: Math.ceil(options.connections),
      pipelining: 1,
      // Our RequestTimer owns every timeout; undici's own header/body timeouts (300 s) would only blur the kinds.
      headersTimeout: 0,
      bodyTimeout: 0,
      // Connecting is part of the wait for the first token: undici's own 10 s connect timeout would cut a slow
      // connect (a server's full listen backlog under thousands of connections) before the TTFT timeout does.
      connect: { timeout: this.#limits.ttftMs, ...(options.lookup ? { lookup: options.lookup } : {}) },
    };
    this.#agent = new Agent(this.#agentOptions);
    this.#draining = new DrainingResponses(Math.ceil(options.connections));
    watchConnectionReuse();
  }

  /** Responses whose reader finished ([DONE]) and whose bodies are still being drained, each holding its connection. */
  get drainingResponses(): number {
    return this.#draining.size;
  }

  /** True when an API key was given but the URL's credentials went as Basic auth instead (the caller warns). */
  get apiKeyReplacedByUrl(): boolean {
    return this.#apiKeyReplacedByUrl;
  }

  /** Stale-connection resends so far, and whether connections are still reused. A copy. */
  get connectionReuse(): ConnectionReuse {
    return { ...this.#reuse };
  }

  /** What reads one attempt's response: the replica its body names (Dynamo's nvext.worker_id) goes where a header's does. */
  #collector(chatRequest: ChatRequest, sentAtMs: number): ResponseCollector {
    return new ResponseCollector(sentAtMs, this.#secrets, chatRequest.onFirstToken, { tokenIds: chatRequest.onPromptTokenIds, onReplica: chatRequest.onReplica });
  }

  /** Sends one turn to the endpoint. Never rejects: every failure is returned as `result.error` with its kind. */
  async send(chatRequest: ChatRequest, signal?: AbortSignal): Promise<StreamResult> {
    const endpoint = this.#endpoint;
    let body: string | Buffer | Buffer[];
    try {
      body = endpoint.encode?.(chatRequest) ?? JSON.stringify(endpoint.body(chatRequest));
    } catch (error) {
      const collector = new ResponseCollector(performance.now(), this.#secrets);
      collector.fail({ kind: 'other', message: `cannot build the request: ${(error as Error).message}` }, collector.result.sentAtMs);
      return collector.result;
    }
    // A large body goes as its chunks, its length declared (sendableBody): kept, so a stale-connection resend resends it.
    const { body: sendable, headers } = sendableBody(
      body,
      chatRequest.conversationId === undefined ? this.#headers : { ...this.#headers, 'x-session-id': chatRequest.conversationId },
    );
    let exchange: Exchange | undefined;
    /** Why we stopped the request: a timeout kind, or `aborted` for the caller's signal. Set before the abort. */
    let stopKind: TimeoutKind | 'aborted' | undefined;
    const stop = (kind: TimeoutKind | 'aborted'): void => {
      stopKind ??= kind;
      exchange?.abort(new RequestStopped(stopKind));
    };
    const sentAtMs = performance.now();
    let collector = this.#collector(chatRequest, sentAtMs);
    if (signal?.aborted) {
      collector.fail({ kind: 'aborted', message: 'aborted before sending' }, sentAtMs);
      return collector.result;
    }
    // Not addEventListener: a listener per request on the run's one signal made each add and remove walk all of
    // them (util/abort-listeners.ts).
    const stopOnAbort = signal === undefined ? undefined : onAbort(signal, () => stop('aborted'));
    const timer = new RequestTimer(sentAtMs, this.#limits, stop);
    const classify = (error: unknown): RequestError =>
      stopKind === undefined ? classifyNetworkError(error, this.#secrets) : this.#stopError(stopKind, signal?.reason);
    /** Sends once through `dispatcher`: resolves with the error when it failed before a response head, else when its body was read. */
    const attempt = (dispatcher: Agent): Promise<Error | undefined> =>
      new Promise((resolve) => {
        const into = collector;
        const pooled = dispatcher === this.#agent;
        const leave = pooled ? this.#draining.enter() : undefined;
        const settle = (failure: Error | undefined): void => {
          leave?.();
          resolve(failure);
        };
        exchange = new Exchange(
          (status, responseHeaders, atMs, control) => {
            const done = (): void => settle(undefined);
            return readResponseHead(status, responseHeaders, atMs, control, { collector: into, timer, classify, stream: chatRequest.stream, done, onReplica: chatRequest.onReplica }, this.#head);
          },
          settle,
          pooled ? this.#draining.track : undefined,
        );
        dispatch(dispatcher, { origin: this.#origin, path: this.#generatePath, method: 'POST', headers, body: sendable }, exchange);
      });
    try {
      let dispatcher = this.#reuse.reuseConnections ? this.#agent : this.#fresh();
      for (;;) {
        const failure = await attempt(dispatcher);
        if (failure === undefined) return collector.result;
        const stale = dispatcher === this.#agent && stopKind === undefined ? this.#staleFailure(failure) : undefined;
        if (stale === undefined) {
          collector.fail(classify(failure), performance.now());
          return collector.result;
        }
        this.#noteStale(stale);
        // The request died on a connection the server had already closed and never reached its handler: it is
        // resent at once on a fresh connection, and timed from that send (neither a retry nor a failure).
        collector = this.#collector(chatRequest, performance.now());
        collector.result.staleConnectionResends = 1;
        dispatcher = this.#fresh();
      }
    } catch (error) {
      // Not expected (the readers never throw), but `send` must never reject.
      collector.fail(classifyNetworkError(error, this.#secrets), performance.now());
      return collector.result;
    } finally {
      timer.stop();
      stopOnAbort?.();
    }
  }

  /** GET /v1/models. Throws ServerUnreachableError on connection failure, ChatloadError on a bad status/body. */
  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    return this.#listModels(this.#requestTimeoutMs, signal);
  }

  /**
   * Polls GET /v1/models until it answers 200 or `timeoutMs` passes (then ServerUnreachableError with the last cause);
   * a failure no wait can cure (an unknown host, HTTP 401/403/404, a TLS failure) ends it at once (readiness.ts).
   * `onRetry` hears each failed attempt's cause.
   */
  async waitReady(timeoutMs: number, signal?: AbortSignal, onRetry?: (cause: string) => void): Promise<ModelInfo[]> {
    return waitUntilReady({ attempt: (ms, s) => this.#listModels(ms, s), url: this.#displayUrl, timeoutMs, signal, onRetry, attemptTimeoutMs: this.#requestTimeoutMs });
  }

  /**
   * The last GET /v1/models that answered 200 with a model list (waitReady, listModels), as it was read: engine
   * detection reads it rather than asking the server again. Undefined before one did.
   */
  get modelsAnswer(): ServerAnswer | undefined {
    return this.#modelsAnswer;
  }

  /** The headers every GET carries (auth and --header), for other requests to the same server such as /metrics scrapes. */
  get authHeaders(): Readonly<Record<string, string>> {
    return this.#getHeaders;
  }

  /** Closes the agent (aborting nothing still in flight is fine: callers abort first). */
  async close(): Promise<void> {
    // The agent's close waits for every request, and a drained body would hold it for its grace (2 s).
    this.#draining.cutAll();
    await Promise.all([this.#agent.close(), this.#freshAgent?.close()]);
  }

  #fresh(): Agent {
    this.#freshAgent ??= new Agent({ ...this.#agentOptions, pipelining: 0 });
    return this.#freshAgent;
  }

  /** The error's stale-connection facts when it is a reset/close of a reused connection before any response byte. */
  #staleFailure(error: unknown): StaleConnectionFailure | undefined {
    const stale = staleConnectionFailure(error);
    return stale !== undefined && classifyNetworkError(error, this.#secrets).kind === 'connect_reset' ? stale : undefined;
  }

  #noteStale(stale: StaleConnectionFailure): void {
    this.#reuse.staleConnectionResends += 1;
    if (stale.idleMs < CLOSES_AFTER_RESPONSE_IDLE_MS) this.#reuse.reuseConnections = false;
  }

  async #listModels(timeoutMs: number, signal: AbortSignal | undefined): Promise<ModelInfo[]> {
    const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let response: Awaited<ReturnType<typeof request>>;
    let text: string;
    try {
      response = await request(this.#modelsUrl, {
        method: 'GET',
        headers: this.#getHeaders,
        dispatcher: this.#agent,
        signal: combined,
      });
      text = response.statusCode === 200 ? await readText(response) : await readBodyExcerpt(plainBody(response));
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw readinessNetworkError(error, this.#displayUrl, this.#secrets, timeout.aborted ? timeoutMs : undefined);
    }
    if (response.statusCode !== 200) {
      // The server's own words when its body is an OpenAI error object, else the body's start.
      const body = sanitizeMessage(text, this.#secrets, 200);
      const said = errorMessageOf(body);
      throw readinessStatusError(response.statusCode, this.#displayUrl, said.length > 0 ? excerpt(said, 120) : body);
    }
    const models = parseModels(text, `${this.#displayUrl}/v1/models`);
    this.#modelsAnswer = { status: response.statusCode, headers: response.headers, text };
    return models;
  }

  /** The error of a request we stopped; `reason` is the caller's signal's reason (the engine's StopReason). */
  #stopError(kind: TimeoutKind | 'aborted', reason?: unknown): RequestError {
    switch (kind) {
      case 'aborted':
        return { kind, message: typeof reason === 'string' ? `aborted by the caller (${reason})` : 'aborted by the caller' };
      case 'timeout_ttft':
        return { kind, message: `no first token within ${this.#limits.ttftMs} ms` };
      case 'timeout_idle':
        return { kind, message: `stream silent for ${this.#limits.idleMs} ms` };
      case 'timeout_total':
        return { kind, message: `request took longer than ${this.#limits.totalMs} ms` };
    }
  }
}
