import { Agent, request } from '../util/undici.js';
import { escapeControl } from '../util/control-chars.js';
import { headerSecrets, redactText } from '../util/redact-text.js';

/** What a probe got back: the status, the headers (lower-case names) and the first `maxBytes` of the body as text. */
export interface ProbeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A probe that got no HTTP answer: the one-line reason (timeout, refused, reset). */
export interface ProbeFailure {
  error: string;
}

/** Options of {@link ProbeHttp}. Times are milliseconds. */
export interface ProbeHttpOptions {
  /** Server root, e.g. `http://127.0.0.1:8000` (no `/v1`); paths are resolved against it. */
  rootUrl: string;
  /** Sent with every request (auth and --header). Their values are removed from every message. */
  headers?: Readonly<Record<string, string>>;
  /** Longest wait for one request, headers and body. @default 2000 */
  timeoutMs?: number;
  /** Aborting it ends every request in flight. */
  signal?: AbortSignal;
}

/** Largest body read from one answer (bytes); the rest is dropped. /get_server_info can be large. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Small bounded HTTP requests to a server's side endpoints (/version, /metrics, /slots, cache resets), on a
 * private connection pool closed by close(). Every request has a timeout; none ever rejects: a failure is a
 * {@link ProbeFailure}.
 */
export class ProbeHttp {
  readonly #agent = new Agent({ connections: 4, pipelining: 1 });
  readonly #root: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #secrets: string[];

  constructor(options: ProbeHttpOptions) {
    this.#root = options.rootUrl.replace(/\/+$/, '');
    this.#headers = { ...options.headers };
    this.#timeoutMs = options.timeoutMs ?? 2_000;
    this.#signal = options.signal;
    this.#secrets = Object.values(this.#headers)
      .flatMap((value) => headerSecrets(value))
      .filter((value) => value.length >= 6);
  }

  /** The absolute URL of `pathOrUrl` (a path like `/version`, or already absolute). */
  url(pathOrUrl: string): string {
    return /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : `${this.#root}${pathOrUrl}`;
  }

  /** GET `pathOrUrl`. */
  get(pathOrUrl: string): Promise<ProbeAnswer | ProbeFailure> {
    return this.#send('GET', pathOrUrl);
  }

  /** POST `pathOrUrl` with an empty body. */
  post(pathOrUrl: string): Promise<ProbeAnswer | ProbeFailure> {
    return this.#send('POST', pathOrUrl);
  }

  /** One line of `text` with the secrets replaced by `[redacted]` (redactText), at most `maxChars` long. */
  excerpt(text: string, maxChars = 160): string {
    const line = escapeControl(redactText(text.replace(/\s+/g, ' ').trim(), this.#secrets));
    return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
  }

  /** Closes the pool, dropping any connection still open. */
  async close(): Promise<void> {
    await this.#agent.destroy();
  }

  async #send(method: 'GET' | 'POST', pathOrUrl: string): Promise<ProbeAnswer | ProbeFailure> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = this.#signal === undefined ? timeout : AbortSignal.any([this.#signal, timeout]);
    try {
      const response = await request(this.url(pathOrUrl), { method, headers: this.#headers, dispatcher: this.#agent, signal });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_BODY_BYTES) {
          response.body.destroy();
          break;
        }
      }
      return { status: response.statusCode, headers: response.headers, text: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8') };
    } catch (error) {
      if (timeout.aborted) return { error: `no answer within ${this.#timeoutMs} ms` };
      const code = (error as { code?: unknown }).code;
      const message = error instanceof Error ? error.message : String(error);
      return { error: this.excerpt(typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message) };
    }
  }
}

/** True when the probe got an HTTP answer. */
export function answered(result: ProbeAnswer | ProbeFailure): result is ProbeAnswer {
  return 'status' in result;
}

/** The answer's JSON body, or undefined when it is not JSON. */
export function jsonOf(answer: ProbeAnswer): unknown {
  try {
    return JSON.parse(answer.text) as unknown;
  } catch {
    return undefined;
  }
}

/** A header's value as one string ('' when absent). */
export function headerOf(answer: ProbeAnswer, name: string): string {
  const value = answer.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}
