import type { Command } from 'commander';

/**
 * The one line for a command line that stops before its command (`chatload`, `chatload trace`, `chatload convert`):
 * the choices, not commander's whole help (issue #35), which buried them in forty lines on stderr. Undefined when
 * argv names a command to run (or asks for help).
 */
export function missingCommand(program: Command, argv: readonly string[]): string | undefined {
  if (argv.length > 1) return undefined;
  const command = argv.length === 0 ? program : program.commands.find((c) => c.name() === argv[0]);
  if (command === undefined || command.commands.length === 0) return undefined;
  const names = command.commands.map((c) => c.name()).filter((name) => name !== 'help');
  const choices = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`;
  const path = command === program ? 'chatload' : `chatload ${command.name()}`;
  const what = command === program ? 'a command' : 'a subcommand';
  return `${command === program ? '' : `${command.name()}: `}expected ${what}: ${choices} (\`${path} --help\` says what each does)`;
}
