/** Exit codes chatload documents: 0 ok, 1 finished with errors over --max-error-rate or failed at run level, 2 bad usage or input, 130 interrupted. */
export const ExitCode = { ok: 0, runFailed: 1, badInput: 2, interrupted: 130 } as const;

/**
 * Base of every run-level failure. The CLI prints `message` (and `hint`) on one line and exits with `exitCode`;
 * it never prints a stack trace for a ChatloadError.
 */
export class ChatloadError extends Error {
  readonly exitCode: number;
  readonly hint: string | undefined;

  constructor(message: string, options: { exitCode?: number; hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ChatloadError';
    this.exitCode = options.exitCode ?? ExitCode.runFailed;
    this.hint = options.hint;
  }
}

/** Matches by name as well as instanceof, so errors that crossed a worker thread still count. */
export function isChatloadError(error: unknown): error is ChatloadError {
  return error instanceof ChatloadError || (error instanceof Error && typeof (error as ChatloadError).exitCode === 'number');
}
