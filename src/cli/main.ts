import { Command, CommanderError } from 'commander';
import { ExitCode, isChatloadError } from '../errors/index.js';
import { escapeControl } from '../util/control-chars.js';
import { chatloadVersion } from '../util/version.js';
import { missingCommand } from './missing-command.js';
import { examplesText } from './examples.js';
import { COMMAND_DESCRIPTIONS, COMMAND_LOADERS, COMMAND_NAMES } from './commands.js';
import type { CommandName } from './command-descriptions.js';

/**
 * The `chatload` program. Only `run` (the command to be run, when argv names one) is loaded and registered in full;
 * every other command is listed by name and description, enough for `chatload --help` and for commander to say
 * "unknown command". Loading them all cost ~0.5 s at every start (issue 17).
 */
export async function buildProgram(run: CommandName | undefined, setExitCode: (code: number) => void = () => {}): Promise<Command> {
  const program = new Command('chatload')
    .description('Multi-turn LLM serving benchmark for OpenAI-compatible servers (vLLM, SGLang, llama.cpp, ...), with a built-in serving simulator.')
    .version(chatloadVersion(), '-V, --version')
    .addHelpText('after', examplesText('chatload'))
    .exitOverride()
    // Commander's usage errors can carry a second line ("Did you mean ...?"): every error stays on one line.
    // Commander's usage errors ("error: unknown option …", with a second line "Did you mean …?") are said in
    // chatload's one style: one line starting "chatload:" (issue 16).
    .configureOutput({ outputError: (text, write) => write(`chatload: ${text.trim().replace(/^error:\s*/i, '').replace(/\s*\n\s*/g, ' ')}\n`) });
  for (const name of COMMAND_NAMES) {
    if (name === run) (await COMMAND_LOADERS[name]())(program, setExitCode);
    else program.command(name).description(COMMAND_DESCRIPTIONS[name]);
  }
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
    // The first word names the command (chatload takes no option before it but --help and --version).
    // `chatload help run` shows run's own help: load it too.
    const first = argv[0] === 'help' ? argv[1] : argv[0];
    const run = first !== undefined && (COMMAND_NAMES as string[]).includes(first) ? (first as CommandName) : undefined;
    const program = await buildProgram(run, (c) => {
      code = c;
    });
    const missing = missingCommand(program, argv);
    if (missing !== undefined) {
      process.stderr.write(`chatload: ${missing}\n`);
      return ExitCode.badInput;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed its one-line message; help and version exit 0, usage errors 2.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.badInput;
    }
    if (isChatloadError(error)) {
      // A message may quote a server's answer or a dataset's text: escaped for the terminal.
      process.stderr.write(`chatload: ${escapeControl(error.message)}${error.hint ? ` (${escapeControl(error.hint)})` : ''}\n`);
      return error.exitCode;
    }
    const detail = error instanceof Error ? error.message : String(error);
    process.stderr.write(`chatload: internal error: ${escapeControl(detail)} (please report it; set CHATLOAD_DEBUG=1 for the stack)\n`);
    if (process.env.CHATLOAD_DEBUG) process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    return ExitCode.runFailed;
  }
}
