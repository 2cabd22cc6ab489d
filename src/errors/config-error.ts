import { ChatloadError, ExitCode } from './chatload-error.js';

/** A bad flag, option or configuration value (exit code 2). */
export class ConfigError extends ChatloadError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, { ...options, exitCode: ExitCode.badInput });
    this.name = 'ConfigError';
  }
}
