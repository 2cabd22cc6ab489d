import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Command } from 'commander';
import { EXAMPLES, type ExamplesKey } from '../../src/cli/examples.js';
import { buildProgram } from '../../src/cli/main.js';
import { runOptionsFromCommand } from '../../src/cli/run-options.js';
import type { CommandName } from '../../src/cli/command-descriptions.js';
import { runCli } from '../helpers/cli.js';

// Issue #34: every --help ends with 2-4 real command lines, each of which the command's own parser accepts.

/** The Examples section's lines at the end of a --help text. */
function examplesOf(help: string): string[] {
  const at = help.lastIndexOf('\nExamples:\n');
  assert.ok(at >= 0, `an Examples section in:\n${help}`);
  return help.slice(at + '\nExamples:\n'.length).trimEnd().split('\n').map((line) => line.trim());
}

/** A command line's words as the shell would pass them, up to a redirection (quotes removed; globs left as they are). */
function words(line: string): string[] {
  const out: string[] = [];
  for (const word of line.split(/\s+/)) {
    if (word.startsWith('>')) break;
    out.push(word.replace(/^"(.*)"$/, '$1'));
  }
  return out;
}

/** Every command under `command`, itself included. */
function descendants(command: Command): Command[] {
  return [command, ...command.commands.flatMap(descendants)];
}

describe('--help ends with Examples', () => {
  const paths: ExamplesKey[] = Object.keys(EXAMPLES) as ExamplesKey[];

  test('each command and subcommand prints 2-4 example lines naming itself, last in its help', { timeout: 120_000 }, async () => {
    for (const path of paths) {
      const args = path === 'chatload' ? ['--help'] : [...path.split(' '), '--help'];
      const result = await runCli(args);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      const lines = examplesOf(result.stdout);
      assert.ok(lines.length >= 2 && lines.length <= 4, `${path}: ${lines.length} examples`);
      const prefix = path === 'chatload' ? 'chatload ' : `chatload ${path.split(' ')[0]} `;
      for (const line of lines) assert.ok(line.startsWith(prefix), `${path}: ${line}`);
      assert.deepEqual(lines, [...EXAMPLES[path]], `${path}: the table's lines`);
    }
  });

  test("every example parses: commander takes its words, and run's and sweep's run options validate", { timeout: 60_000 }, async () => {
    for (const path of paths) {
      for (const line of EXAMPLES[path]) {
        const argv = words(line).slice(1);
        const name = argv[0] as CommandName;
        const program = await buildProgram(name);
        program.configureOutput({ writeErr: () => {}, writeOut: () => {} });
        let ran = false;
        for (const command of descendants(program.commands.find((c) => c.name() === name)!)) {
          command.exitOverride();
          command.action(() => {
            // run and sweep: the run options must validate too (they read no file before a run starts).
            if (command.name() === 'run' || command.name() === 'sweep') runOptionsFromCommand(command, {});
            ran = true;
          });
        }
        await assert.doesNotReject(program.parseAsync(argv, { from: 'user' }), line);
        assert.ok(ran, `${line}: an action ran (no help or missing subcommand)`);
      }
    }
  });
});
