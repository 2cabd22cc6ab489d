import { Command, CommanderError } from 'commander';
import { ExitCode, isChatloadError } from '../errors/index.js';
import { chatloadVersion } from '../util/version.js';
import { registerCompareCommand } from './compare.js';
import { registerMergeCommand } from './merge.js';
import { registerReportCommand } from './report.js';
import { registerConvertCommand } from './convert.js';
import { registerGenerateCommand } from './generate.js';
import { registerRunCommand } from './run.js';
import { registerServeCommand } from './serve.js';
import { registerSweepCommand } from './sweep.js';

/** The `chatload` program with every command registered. */
export function buildProgram(setExitCode: (code: number) => void = () => {}): Command {
  const program = new Command('chatload')
    .description('Multi-turn LLM serving benchmark for OpenAI-compatible servers (vLLM, SGLang, llama.cpp, ...), with a built-in serving simulator.')
    .version(chatloadVersion(), '-V, --version')
    .exitOverride()
    // Commander's usage errors can carry a second line ("Did you mean ...?"): every error stays on one line.
    .configureOutput({ outputError: (text, write) => write(`${text.trimEnd().replace(/\s*\n\s*/g, ' ')}\n`) });
  registerRunCommand(program, setExitCode);
  registerServeCommand(program);
  registerGenerateCommand(program);
  registerConvertCommand(program);
  registerSweepCommand(program);
  registerReportCommand(program);
  registerCompareCommand(program);
  registerMergeCommand(program);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/**
 * Runs the CLI and returns the exit code: 0 ok, 1 finished with errors over --max-error-rate (or a run-level
 * failure), 2 bad usage or input, 130 interrupted. Errors are one line on stderr, with no stack trace.
 */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    let code: number = ExitCode.ok;
    const program = buildProgram((c) => {
      code = c;
    });
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed its one-line message; help and version exit 0, usage errors 2.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.badInput;
    }
    if (isChatloadError(error)) {
      process.stderr.write(`chatload: ${error.message}${error.hint ? ` (${error.hint})` : ''}\n`);
      return error.exitCode;
    }
    const detail = error instanceof Error ? error.message : String(error);
    process.stderr.write(`chatload: internal error: ${detail} (please report it; set CHATLOAD_DEBUG=1 for the stack)\n`);
    if (process.env.CHATLOAD_DEBUG) process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    return ExitCode.runFailed;
  }
}
