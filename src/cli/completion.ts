import { Argument, Command } from 'commander';
import { optionChoices } from '../options/commander.js';
import type { CompletionCommand } from './completion-model.js';
import { fishCompletion } from './completion-fish.js';
import { bashCompletion, zshCompletion } from './completion-scripts.js';
import { ConfigError } from '../errors/index.js';
import { COMMAND_DESCRIPTIONS, type CommandName } from './command-descriptions.js';
import { examplesText } from './examples.js';

/** How to load each command's registration (commands.ts's COMMAND_LOADERS, passed in: that module loads this one). */
export type CommandLoaders = Readonly<Record<CommandName, () => Promise<(program: Command, setExitCode: (code: number) => void) => void>>>;

/** The shells `chatload completion` writes a script for. */
const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** A commander command as completion sees it: its flags (with the words they take), subcommands and argument's words. */
function completionCommand(command: Command): CompletionCommand {
  const args = command.registeredArguments[0]?.argChoices;
  return {
    name: command.name(),
    description: command.description(),
    flags: [
      ...command.options.map((o) => ({
        words: [o.short, o.long].filter((w): w is string => w !== undefined),
        takesValue: o.required || o.optional,
        help: o.description,
        choices: optionChoices(o) ?? o.argChoices,
      })),
      { words: ['-h', '--help'], takesValue: false, help: 'display help for command' },
    ],
    subcommands: command.commands.map(completionCommand),
    ...(args === undefined ? {} : { args }),
  };
}

/**
 * Every command and its flags, read from the commands themselves (each registered on a scratch program: the option
 * table for run and sweep, commander's options for the others), so the completion never drifts from the CLI.
 */
async function commandsForCompletion(loaders: CommandLoaders): Promise<CompletionCommand[]> {
  const program = new Command('chatload');
  for (const name of Object.keys(COMMAND_DESCRIPTIONS) as CommandName[]) {
    if (name === 'completion') program.command(name).description(COMMAND_DESCRIPTIONS[name]).addArgument(new Argument('<shell>').choices(SHELLS));
    else (await loaders[name]())(program, () => {});
  }
  return program.commands.map(completionCommand);
}

const SCRIPTS = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion } as const;

/** Adds `chatload completion bash|zsh|fish`: prints the shell's completion script on stdout. */
export function registerCompletionCommand(program: Command, loaders: CommandLoaders): void {
  program
    .command('completion')
    .description(COMMAND_DESCRIPTIONS.completion)
    .addHelpText('after', examplesText('completion'))
    .argument('<shell>', 'bash, zsh or fish')
    .action(async (shell: string) => {
      if (!(SHELLS as readonly string[]).includes(shell)) throw new ConfigError(`completion: expected bash, zsh or fish, got ${JSON.stringify(shell)}`);
      process.stdout.write(SCRIPTS[shell as (typeof SHELLS)[number]](await commandsForCompletion(loaders)));
    });
}

