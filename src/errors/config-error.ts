import { ChatloadError, ExitCode } from './chatload-error.js';

/** A bad flag, option or configuration value (exit code 2). */
export class ConfigError extends ChatloadError {
  /** For invalid options: each problem, naming its flag (the message joins them on one line). Empty otherwise. */
  readonly problems: readonly string[];

  constructor(message: string, options: { hint?: string; cause?: unknown; problems?: readonly string[] } = {}) {
    const { problems, ...rest } = options;
    super(message, { ...rest, exitCode: ExitCode.badInput });
    this.name = 'ConfigError';
    this.problems = problems ?? [];
  }
}
