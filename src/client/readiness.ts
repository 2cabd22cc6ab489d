import { setTimeout as sleep } from 'node:timers/promises';
import { ChatloadError, ConfigError, ExitCode, ServerRefusedError, ServerUnreachableError } from '../errors/index.js';
import { classifyNetworkError, collectCodes } from './classify-error.js';
import type { ModelInfo } from './server-answers.js';

/*
 * The readiness wait before a run (GET /v1/models until it answers 200), and which failures no wait can cure
 * (issue #34: an unknown host, a 401 or 404, a TLS failure each waited the whole --ready-timeout-sec, 60 s). A refused
 * connection or a 503 may be a server still starting: those are waited on, and each retry says its cause.
 */

/** First and largest pause (ms) between polls. */
const READY_POLL_FIRST_MS = 100;
const READY_POLL_MAX_MS = 1_000;
/** The least time (ms) worth a further attempt. */
const READY_MIN_ATTEMPT_MS = 50;

/** getaddrinfo's answers that a retry cannot change (EAI_AGAIN, a resolver's hiccup, may be waited on). */
const UNKNOWN_HOST = new Set(['ENOTFOUND', 'EAI_NONAME', 'EAI_FAIL']);
/** OpenSSL's and Node's TLS failures: a certificate, or https:// to a server that speaks http. */
const TLS_FAILURE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_(GET|VERIFY)|DEPTH_ZERO_SELF_SIGNED|SELF_SIGNED_CERT|HOSTNAME_MISMATCH)/;

/**
 * A network failure of GET /v1/models as the error the wait throws: an unknown host is bad input (exit 2), a TLS
 * failure the server's (exit 1), both final; anything else a ServerUnreachableError, which is waited on.
 */
export function readinessNetworkError(error: unknown, url: string, secrets: readonly string[], timedOutMs?: number): ChatloadError {
  if (timedOutMs !== undefined) return new ServerUnreachableError(url, `no answer to GET /v1/models within ${Math.round(timedOutMs)} ms`, { cause: error });
  const codes = collectCodes(error);
  const detail = classifyNetworkError(error, secrets).message;
  const unknownHost = codes.find((code) => UNKNOWN_HOST.has(code));
  if (unknownHost !== undefined) {
    return new ConfigError(`cannot reach the server at ${url}: its host name does not resolve (${unknownHost}); check the URL (-u/--url or OPENAI_BASE_URL)`, { cause: error });
  }
  if (codes.some((code) => TLS_FAILURE.test(code))) {
    const plain = codes.includes('ERR_SSL_WRONG_VERSION_NUMBER') ? 'the server speaks plain HTTP: use http://' : 'check its certificate, or use http:// for a server without TLS';
    return new ServerRefusedError(url, `failed the TLS handshake (${codes.find((code) => TLS_FAILURE.test(code))})`, plain, { cause: error });
  }
  return new ServerUnreachableError(url, detail, { cause: error });
}

/** What a status other than 200 on GET /v1/models means: 401, 403 and 404 are final; others (503 while loading) are waited on. */
export function readinessStatusError(status: number, url: string, said: string): ChatloadError {
  const answered = `answered GET /v1/models with HTTP ${status}${said.length > 0 ? `: ${said}` : ''}`;
  if (status === 401 || status === 403) return new ServerRefusedError(url, answered, 'check the API key (--api-key or OPENAI_API_KEY) or the --header that authorizes');
  if (status === 404) return new ServerRefusedError(url, answered, "check the URL: it is the server's base, e.g. http://host:8000 (chatload adds /v1/...)");
  return new ChatloadError(`GET ${url}/v1/models answered HTTP ${status}${said.length > 0 ? `: ${said}` : ''}`);
}

/** True for the failures no wait can cure. */
function isFinal(error: unknown): boolean {
  return error instanceof ServerRefusedError || error instanceof ConfigError;
}

/** One failed attempt, as the waiting line says it: `connect ECONNREFUSED 127.0.0.1:8000`. */
function causeOf(error: unknown): string {
  if (error instanceof ServerUnreachableError) return error.message.replace(/^cannot reach the server at \S+: /, '');
  return error instanceof Error ? error.message : 'no answer';
}

/** What waitUntilReady needs: one attempt (GET /v1/models within `timeoutMs`), the URL as shown, and who hears each retry. */
export interface ReadinessWait {
  attempt: (timeoutMs: number, signal: AbortSignal | undefined) => Promise<ModelInfo[]>;
  url: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Each failed attempt's cause, as the wait goes on. */
  onRetry?: (cause: string) => void;
  /** The longest one attempt may take. */
  attemptTimeoutMs: number;
}

/**
 * Polls until an attempt answers (its models), `timeoutMs` passes (a ServerUnreachableError naming the last cause) or
 * a failure no wait can cure comes (thrown at once). Ctrl-C or SIGTERM during the wait (a plain abort) is an
 * interruption (exit 130, issue #35); a caller's own abort reason is thrown as it is.
 */
export async function waitUntilReady(wait: ReadinessWait): Promise<ModelInfo[]> {
  const { signal } = wait;
  const deadlineMs = performance.now() + wait.timeoutMs;
  let pauseMs = READY_POLL_FIRST_MS;
  let lastError: unknown;
  const interrupted = (): unknown => {
    const reason: unknown = signal?.reason;
    if (reason instanceof Error && reason.name !== 'AbortError') return reason;
    return new ChatloadError(`interrupted while waiting for ${wait.url} to answer`, { exitCode: ExitCode.interrupted });
  };
  for (;;) {
    if (signal?.aborted) throw interrupted();
    const remainingMs = deadlineMs - performance.now();
    // An attempt with almost no time left can only time out, and its "no answer" would hide the real cause
    // (e.g. ECONNREFUSED) of the attempts before it.
    if (remainingMs <= 0 || (lastError !== undefined && remainingMs < READY_MIN_ATTEMPT_MS)) break;
    try {
      return await wait.attempt(Math.min(remainingMs, wait.attemptTimeoutMs), signal);
    } catch (error) {
      if (signal?.aborted) throw interrupted();
      if (isFinal(error)) throw error;
      lastError = error;
      wait.onRetry?.(causeOf(error));
    }
    const waitMs = Math.min(pauseMs, deadlineMs - performance.now());
    if (waitMs <= 0) break;
    await sleep(waitMs, undefined, signal ? { signal } : undefined).catch(() => {
      throw interrupted();
    });
    pauseMs = Math.min(READY_POLL_MAX_MS, pauseMs * 2);
  }
  throw new ServerUnreachableError(wait.url, `not ready within ${wait.timeoutMs} ms (last error: ${lastError === undefined ? 'no answer' : causeOf(lastError)})`, { cause: lastError });
}
