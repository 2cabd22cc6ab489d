// Property test of the option parser (issue 16): any command line made of chatload run's own flags, with arbitrary
// values (numbers out of range, words, JSON, empty strings, repeated flags), ends in a RunPlan or in one ConfigError
// whose every line names a flag; never another exception. The library's planRun() likewise for arbitrary values.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Command, CommanderError } from 'commander';
import fc from 'fast-check';
import { addRunOptions, runOptionsFromCommand } from '../../src/cli/run-options.js';
import { ConfigError } from '../../src/errors/index.js';
import { longFlag } from '../../src/options/define.js';
import { RUN_OPTIONS } from '../../src/options/run-options.js';
import { planRun } from '../../src/options/run-plan.js';

const specs = Object.values(RUN_OPTIONS);
const flags = specs.map((spec) => longFlag(spec));
const value = fc.oneof(
  fc.integer({ min: -1e6, max: 1e6 }).map(String),
  fc.double({ noNaN: false }).map(String),
  fc.constantFrom('', '0', '-1', '1e309', 'NaN', 'abc', '{}', '[]', '{"a":1}', 'uniform:1:5', 'ttft:500', '0%,50%', '1/2', 'x=y', 'a: b', '2026-01-01T00:00:00Z'),
  fc.string({ maxLength: 12 }),
);
const argv = fc.array(fc.tuple(fc.constantFrom(...flags), value), { maxLength: 6 }).map((pairs) => pairs.flatMap(([flag, v]) => [flag, v]));

function parse(args: string[]): 'plan' | 'error' {
  const command = addRunOptions(new Command('run')).exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  try {
    command.parse(args, { from: 'user' });
  } catch (error) {
    // Commander's own refusal (a flag that takes no value given one, …): a usage error the CLI prints on one line.
    assert.ok(error instanceof CommanderError, String(error));
    return 'error';
  }
  try {
    runOptionsFromCommand(command, {});
    return 'plan';
  } catch (error) {
    assert.ok(error instanceof ConfigError, `not a ConfigError: ${(error as Error)?.stack ?? String(error)}`);
    // One line, `invalid options: PROBLEM; PROBLEM…`, and each problem names its flag.
    assert.ok(!error.message.includes('\n'), `one line: ${error.message}`);
    assert.equal(error.message, `invalid options: ${error.problems.join('; ')}`);
    assert.ok(error.problems.length > 0);
    for (const problem of error.problems) assert.match(problem, /^--[a-z]/, `a problem names its flag first: ${problem}`);
    return 'error';
  }
}

describe('the option parser never throws anything but a ConfigError', () => {
  test('command lines of real flags with arbitrary values', () => {
    let plans = 0;
    fc.assert(
      fc.property(argv, (args) => {
        if (parse(args) === 'plan') plans += 1;
      }),
      { numRuns: 400 },
    );
    assert.ok(plans > 0, 'some command lines were valid');
  });

  test('the library: arbitrary JSON values under real option keys', () => {
    const keys = Object.keys(RUN_OPTIONS);
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...keys), fc.jsonValue(), { maxKeys: 5 }), (input) => {
        try {
          planRun(input as Parameters<typeof planRun>[0]);
        } catch (error) {
          assert.ok(error instanceof ConfigError, `not a ConfigError: ${(error as Error)?.stack ?? String(error)}`);
        }
      }),
      { numRuns: 400 },
    );
  });
});
