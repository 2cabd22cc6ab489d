import { shellQuoted as quoted, type CompletionCommand } from './completion-model.js';

/** The bash `case` branch of one command: the choices of the flag before the cursor, its flags, its argument words. */
function bashBranch(pattern: string, c: CompletionCommand): string {
  const choices = c.flags
    .filter((f) => f.choices !== undefined && f.takesValue)
    .map((f) => `        ${f.words.join('|')}) choices=${quoted(f.choices!.join(' '))} ;;`);
  const prev = choices.length === 0 ? '' : `      case "$prev" in\n${choices.join('\n')}\n      esac\n`;
  const args = c.args === undefined ? '' : ` args=${quoted(c.args.join(' '))}`;
  return `    ${pattern})\n${prev}      opts=${quoted(c.flags.flatMap((f) => f.words).join(' '))}${args} ;;`;
}

/**
 * The bash completion script: command names first, then a command's subcommand (convert, trace), the choices of a
 * flag that takes words (--endpoint, --progress), the command's flags, its argument's words, else files.
 */
export function bashCompletion(commands: readonly CompletionCommand[]): string {
  const branches = commands.flatMap((c) => [
    bashBranch(c.name, c),
    ...c.subcommands.map((s) => bashBranch(quoted(`${c.name} ${s.name}`), s)),
  ]);
  const parents = commands.filter((c) => c.subcommands.length > 0);
  const subcommands = parents.map((c) => `    ${c.name}) subs=${quoted(c.subcommands.map((s) => s.name).join(' '))} ;;`);
  return `# chatload bash completion: eval "$(chatload completion bash)", e.g. in ~/.bashrc
_chatload() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ \${COMP_CWORD} -eq 1 ]]; then
    COMPREPLY=( $(compgen -W ${quoted(['--help', '--version', ...commands.map((c) => c.name)].join(' '))} -- "$cur") )
    return 0
  fi
  local command="\${COMP_WORDS[1]}" subs=''
  case "$command" in
${subcommands.join('\n')}
  esac
  if [[ -n "$subs" ]]; then
    if [[ \${COMP_CWORD} -eq 2 ]]; then
      COMPREPLY=( $(compgen -W "$subs --help" -- "$cur") )
      return 0
    fi
    command="$command \${COMP_WORDS[2]}"
  fi
  local opts='' args='' choices=''
  case "$command" in
${branches.join('\n')}
  esac
  if [[ -n "$choices" ]]; then
    COMPREPLY=( $(compgen -W "$choices" -- "$cur") )
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  elif [[ -n "$args" ]]; then
    COMPREPLY=( $(compgen -W "$args" -- "$cur") )
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

/** A command's _arguments call: each flag with its help, and its value's words or files; its argument's words, or files. */
function zshArguments(c: CompletionCommand, indent: string): string {
  const specs = c.flags.flatMap((f) => {
    const value = !f.takesValue ? '' : f.choices !== undefined ? `:value:(${f.choices.join(' ')})` : ':value:_files';
    return f.words.map((w) => `'${w}[${zshText(f.help)}]${value}'`);
  });
  const args = c.args === undefined ? `'*:file:_files'` : `'1:${c.name === 'completion' ? 'shell' : 'value'}:(${c.args.join(' ')})'`;
  return `${indent}_arguments -s ${specs.join(' ')} ${args}`;
}

/** The zsh branch of one command: its _arguments, or its subcommands (described) then theirs. */
function zshBranch(c: CompletionCommand): string {
  if (c.subcommands.length === 0) return `    ${c.name})\n${zshArguments(c, '      ')}\n      ;;`;
  const described = c.subcommands.map((s) => `'${s.name}:${zshText(s.description)}'`).join(' ');
  const subs = c.subcommands.map((s) => `        ${s.name})\n${zshArguments(s, '          ')}\n          ;;`).join('\n');
  return `    ${c.name})
      if (( CURRENT == 2 )); then
        local -a subcommands
        subcommands=(${described})
        _describe 'subcommand' subcommands
        return
      fi
      shift words; (( CURRENT-- ))
      case $words[1] in
${subs}
      esac
      ;;`;
}

/** The zsh completion script (native: _describe for commands and subcommands, _arguments with help for each command's flags). */
export function zshCompletion(commands: readonly CompletionCommand[]): string {
  const described = commands.map((c) => `    '${c.name}:${zshText(c.description)}'`).join('\n');
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
  # From the command on, as _arguments expects: the command is words[1].
  shift words; (( CURRENT-- ))
  case $words[1] in
${commands.map(zshBranch).join('\n')}
  esac
}
compdef _chatload chatload
`;
}
