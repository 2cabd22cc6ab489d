/** One flag for completion: its words (-p, --num-clients), whether it takes a value, its help and the words it takes. */
export interface CompletionFlag {
  words: string[];
  takesValue: boolean;
  help: string;
  /** The values the flag takes when they are a list of words (--endpoint's chat, responses, completions). */
  choices?: readonly string[];
}

/** A command (or a subcommand: convert sharegpt, trace stats) for completion. */
export interface CompletionCommand {
  name: string;
  description: string;
  flags: CompletionFlag[];
  /** Its subcommands, offered as the word after it (convert: sharegpt; trace: stats, synthesize). */
  subcommands: CompletionCommand[];
  /** The words its first argument takes, when a list (completion: bash, zsh, fish); else files are offered. */
  args?: readonly string[];
}

/** Quotes text for a single-quoted POSIX shell string. */
export function shellQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
