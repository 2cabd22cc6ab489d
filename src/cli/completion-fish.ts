import type { CompletionCommand, CompletionFlag } from './completion-model.js';

/** Quotes text for a fish single-quoted string (only \ and ' are special there). */
function fishQuoted(text: string): string {
  return `'${text.replace(/[\\']/g, '\\$&')}'`;
}

/** A fish description: one line, short. */
function fishHelp(text: string): string {
  return fishQuoted(text.replace(/\s+/g, ' ').slice(0, 100));
}

/** One flag's `complete` line under `condition`: -s/-l per word; -x with its words, -r (files) with another value. */
function fishFlag(condition: string, f: CompletionFlag): string {
  const names = f.words.map((w) => (w.startsWith('--') ? `-l ${w.slice(2)}` : `-s ${w.slice(1)}`)).join(' ');
  const value = !f.takesValue ? '' : f.choices !== undefined ? ` -x -a ${fishQuoted(f.choices.join(' '))}` : ' -r';
  return `complete -c chatload -n ${fishQuoted(condition)} ${names}${value} -d ${fishHelp(f.help)}`;
}

/** The lines of a command at `path` (e.g. ['convert', 'sharegpt']): its flags, its argument's words, its subcommands. */
function fishCommand(path: readonly string[], c: CompletionCommand): string[] {
  const on = `__chatload_on ${path.join(' ')}`;
  const lines = c.flags.map((f) => fishFlag(on, f));
  if (c.args !== undefined) lines.push(`complete -c chatload -n ${fishQuoted(`__chatload_at ${path.join(' ')}`)} -f -a ${fishQuoted(c.args.join(' '))}`);
  for (const s of c.subcommands) {
    lines.push(`complete -c chatload -n ${fishQuoted(`__chatload_at ${path.join(' ')}`)} -f -a ${s.name} -d ${fishHelp(s.description)}`);
    lines.push(...fishCommand([...path, s.name], s));
  }
  return lines;
}

/**
 * The fish completion script: the commands with their descriptions, then each command's (and subcommand's) flags
 * with help, the words of a flag that takes a list of them (--endpoint, --progress) and the shells of `completion`.
 * `__chatload_on WORDS` is true when the command line starts `chatload WORDS`; `__chatload_at WORDS` when, besides,
 * the next word is the first after them (a subcommand, or `completion`'s shell).
 */
export function fishCompletion(commands: readonly CompletionCommand[]): string {
  const lines = [
    '# chatload fish completion: chatload completion fish > ~/.config/fish/completions/chatload.fish',
    'function __chatload_on --description "the command line starts with chatload and these words"',
    '    set -l tokens (commandline -opc)',
    '    test (count $tokens) -gt (count $argv); or return 1',
    '    for i in (seq (count $argv))',
    '        set -l j (math $i + 1)',
    '        test "$tokens[$j]" = "$argv[$i]"; or return 1',
    '    end',
    'end',
    'function __chatload_at --description "as __chatload_on, with nothing typed after these words yet"',
    '    __chatload_on $argv; and test (count (commandline -opc)) -eq (math (count $argv) + 1)',
    'end',
    "complete -c chatload -n 'test (count (commandline -opc)) -eq 1' -f -l help -s h -d 'display help'",
    "complete -c chatload -n 'test (count (commandline -opc)) -eq 1' -f -l version -s V -d 'the version'",
  ];
  for (const c of commands) {
    lines.push(`complete -c chatload -n 'test (count (commandline -opc)) -eq 1' -f -a ${c.name} -d ${fishHelp(c.description)}`);
    lines.push(...fishCommand([c.name], c));
  }
  return `${lines.join('\n')}\n`;
}
