import { ChatloadError, ExitCode } from './chatload-error.js';

/** The target server could not be reached, or never became ready, before the benchmark could start (exit code 1). */
export class ServerUnreachableError extends ChatloadError {
  readonly url: string;

  constructor(url: string, detail: string, options: { cause?: unknown } = {}) {
    super(`cannot reach the server at ${url}: ${detail}`, {
      ...options,
      exitCode: ExitCode.runFailed,
      // Never "pass -u": the URL was given (-u or OPENAI_BASE_URL); without one chatload starts its own simulator.
      hint: 'is the server started, and is this its URL (-u/--url or OPENAI_BASE_URL)? Without a URL chatload runs its built-in simulator',
    });
    this.name = 'ServerUnreachableError';
    this.url = url;
  }
}

/**
 * The server answered the readiness check in a way no wait can change (HTTP 401, 403 or 404 on GET /v1/models, a
 * TLS failure): the wait ends at once (issue #34: each waited the full --ready-timeout-sec), exit code 1.
 */
export class ServerRefusedError extends ChatloadError {
  readonly url: string;

  constructor(url: string, detail: string, hint: string, options: { cause?: unknown } = {}) {
    super(`the server at ${url} ${detail}`, { ...options, exitCode: ExitCode.runFailed, hint });
    this.name = 'ServerRefusedError';
    this.url = url;
  }
}
