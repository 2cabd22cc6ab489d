import { ChatloadError, ExitCode } from './chatload-error.js';

/** The target server could not be reached, or never became ready, before the benchmark could start (exit code 1). */
export class ServerUnreachableError extends ChatloadError {
  readonly url: string;

  constructor(url: string, detail: string, options: { cause?: unknown } = {}) {
    super(`cannot reach the server at ${url}: ${detail}`, {
      ...options,
      exitCode: ExitCode.runFailed,
      hint: 'start the server first, or pass -u/--url; without --url chatload runs its built-in simulator',
    });
    this.name = 'ServerUnreachableError';
    this.url = url;
  }
}
