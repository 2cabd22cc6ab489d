import { Command } from 'commander';
import { ConfigError } from '../errors/index.js';
import { COMMAND_DESCRIPTIONS, type CommandName } from './command-descriptions.js';
import { examplesText } from './examples.js';

/** How to load each command's registration (commands.ts's COMMAND_LOADERS, passed in: that module loads this one). */
export type CommandLoaders = Readonly<Record<CommandName, () => Promise<(program: Command, setExitCode: (code: number) => void) => void>>>;

/** One command's flags for completion: each flag word, whether it takes a value, and its help. */
interface CompletionCommand {
  name: string;
  description: string;
  flags: Array<{ words: string[]; takesValue: boolean; help: string }>;
}

/**
 * Every command and its flags, read from the commands themselves (each registered on a scratch program: the option
 * table for run and sweep, commander's options for the others), so the completion never drifts from the CLI.
 */
async function commandsForCompletion(loaders: CommandLoaders): Promise<CompletionCommand[]> {
  const program = new Command('chatload');
  for (const name of Object.keys(COMMAND_DESCRIPTIONS) as CommandName[]) {
    if (name === 'completion') program.command(name).description(COMMAND_DESCRIPTIONS[name]).argument('<shell>');
    else (await loaders[name]())(program, () => {});
  }
  return program.commands.map((command) => ({
    name: command.name(),
    description: command.description(),
    flags: [
      ...command.options.map((o) => ({ words: [o.short, o.long].filter((w): w is string => w !== undefined), takesValue: o.required || o.optional, help: o.description })),
      { words: ['-h', '--help'], takesValue: false, help: 'display help for command' },
    ],
  }));
}

/** Quotes text for a single-quoted shell string. */
function quoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The bash completion script: command names first, then the command's flags (files for values and arguments). */
export function bashCompletion(commands: readonly CompletionCommand[]): string {
  const cases = commands
    .map((c) => `    ${c.name}) opts=${quoted(c.flags.flatMap((f) => f.words).join(' '))} ;;`)
    .join('\n');
  return `# chatload bash completion: eval "$(chatload completion bash)", e.g. in ~/.bashrc
_chatload() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  if [[ \${COMP_CWORD} -eq 1 ]]; then
    COMPREPLY=( $(compgen -W ${quoted(['--help', '--version', ...commands.map((c) => c.name)].join(' '))} -- "$cur") )
    return 0
  fi
  local opts=''
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  else
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
  return 0
}
complete -o default -o bashdefault -F _chatload chatload
`;
}

/** Escapes text for a zsh _arguments/_describe spec (brackets, colons and backslashes are syntax there). */
function zshText(text: string): string {
  return text.slice(0, 120).replace(/\\/g, '\\\\').replace(/([[\]:])/g, '\\$1').replace(/'/g, `'\\''`);
}

/** The zsh completion script (native: _describe for commands, _arguments with help for each command's flags). */
export function zshCompletion(commands: readonly CompletionCommand[]): string {
  const described = commands.map((c) => `    '${c.name}:${zshText(c.description)}'`).join('\n');
  const cases = commands
    .map((c) => {
      const specs = c.flags.flatMap((f) =>
        f.words.map((w) => `'${w}[${zshText(f.help)}]${f.takesValue ? ':value:_files' : ''}'`),
      );
      return `    ${c.name})\n      _arguments -s ${specs.join(' ')} '*:file:_files'\n      ;;`;
    })
    .join('\n');
  return `#compdef chatload
# chatload zsh completion: eval "$(chatload completion zsh)" in ~/.zshrc (after compinit), or save it as _chatload on $fpath
_chatload() {
  local -a commands
  commands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case $words[2] in
${cases}
  esac
}
compdef _chatload chatload
`;
}

/** Adds `chatload completion bash|zsh`: prints the shell's completion script on stdout. */
export function registerCompletionCommand(program: Command, loaders: CommandLoaders): void {
  program
    .command('completion')
    .description(COMMAND_DESCRIPTIONS.completion)
    .addHelpText('after', examplesText('completion'))
    .argument('<shell>', 'bash or zsh')
    .action(async (shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new ConfigError(`completion: expected bash or zsh, got ${JSON.stringify(shell)}`);
      const commands = await commandsForCompletion(loaders);
      process.stdout.write(shell === 'bash' ? bashCompletion(commands) : zshCompletion(commands));
    });
}

