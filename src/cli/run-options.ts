import type { Command } from 'commander';
import { addTableOptions, fieldProblems, readTableOptions, type CommandValues } from '../options/commander.js';
import type { OptionTable } from '../options/define.js';
import { checkRunOptions, formatProblem, optionsError, RUN_OPTIONS, type OptionProblem, type RunOptionsInput } from '../options/run-options.js';
import { planOf, type RunPlan } from '../options/run-plan.js';
import { terminalOptions } from '../options/table/outputs.js';
import { ConfigError } from '../errors/index.js';
import type { ProgressMode } from '../report/progress.js';
import { isSecretKey } from '../store/redact.js';

/** A Kubernetes Indexed Job gives each pod JOB_COMPLETION_INDEX; CHATLOAD_SHARD_COUNT (the Job's completions) says of how many. */
export function shardFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const index = env.JOB_COMPLETION_INDEX;
  const count = env.CHATLOAD_SHARD_COUNT;
  return index !== undefined && count !== undefined && index !== '' && count !== '' ? `${index}/${count}` : undefined;
}

/** Adds every `chatload run` option (the run option table) and the terminal flags to `command`: run and sweep share them. */
export function addRunOptions(command: Command): Command {
  return addTableOptions(addTableOptions(command, RUN_OPTIONS), terminalOptions);
}

/** The flags of run and sweep that only change what the terminal shows. */
export interface TerminalFlags {
  quiet: boolean;
  verbose: boolean;
  printContent: boolean;
  /** How live progress is drawn, decided from --progress, -q and whether stderr is a terminal. */
  progress: ProgressMode;
  /** --json: the summary as one JSON object on stdout. */
  json: boolean;
}

/** The terminal flags of a parsed command (false when not given). */
export function terminalFlags(command: Command): TerminalFlags {
  const { values } = readTableOptions(command, terminalOptions);
  const mode = values.progress ?? 'auto';
  if (mode !== 'auto' && mode !== 'panel' && mode !== 'plain' && mode !== 'off') {
    throw new ConfigError(`--progress: expected auto, panel, plain or off, got ${JSON.stringify(mode)}`);
  }
  const quiet = values.quiet === true;
  const progress: ProgressMode = quiet ? 'off' : mode === 'auto' ? (process.stderr.isTTY ? 'panel' : 'plain') : mode;
  return { quiet, verbose: values.verbose === true, printContent: values.printContent === true, progress, json: values.json === true };
}

/**
 * A flag's text as an error may quote it: never a secret's (--api-key), and a URL's user and password as
 * `[redacted]` (`-u ftp://user:pw@host` is refused for its scheme, and its password must not reach the terminal).
 */
function shownText(key: string, text: string | undefined): string | undefined {
  if (text === undefined || isSecretKey(key)) return undefined;
  return text.replace(/^((?:[a-z][a-z0-9+.-]*:)?\/\/)?[^/@\s]*@/i, '$1[redacted]@');
}

/**
 * The problems of a table, in the table's order, each `--flag: problem`, naming an environment variable that gave
 * the value, and the text given where the problem is what was expected of it (`expected a whole number, got "1e6"`).
 */
export function problemLines(problems: readonly OptionProblem[], table: OptionTable, given: Pick<CommandValues, 'fromEnv' | 'texts'>): string[] {
  const order = Object.keys(table);
  const rank = (p: OptionProblem): number => (p.key === undefined ? -1 : order.indexOf(p.key));
  const named = (p: OptionProblem): OptionProblem => {
    const text = p.key === undefined ? undefined : shownText(p.key, given.texts[p.key]);
    return text === undefined || !p.message.startsWith('expected') || p.message.includes(' got ') ? p : { ...p, message: `${p.message}, got ${JSON.stringify(text)}` };
  };
  return [...problems].sort((a, b) => rank(a) - rank(b)).map((p) => formatProblem(named(p), table, (key) => (given.fromEnv[key] === undefined ? '' : ` (from ${given.fromEnv[key]})`)));
}

/**
 * The run options a parsed command line gave (flags, and the environment variables the table names), validated:
 * the input as the library takes it, and its plan. One ConfigError lists every problem, each naming its flag.
 */
export function runOptionsFromCommand(command: Command, env: NodeJS.ProcessEnv): { input: RunOptionsInput; plan: RunPlan } {
  const given = readTableOptions(command, RUN_OPTIONS);
  const { values, problems, fromEnv } = given;
  const shard = values.shard === undefined ? shardFromEnv(env) : undefined;
  if (shard !== undefined) {
    values.shard = shard;
    fromEnv.shard = 'JOB_COMPLETION_INDEX and CHATLOAD_SHARD_COUNT';
  }
  if (problems.length > 0) {
    const unread = new Set(problems.map((p) => p.key));
    const others = fieldProblems(Object.fromEntries(Object.entries(values).filter(([key]) => !unread.has(key))), RUN_OPTIONS);
    throw optionsError(problemLines([...problems, ...others], RUN_OPTIONS, given));
  }
  const input = values as RunOptionsInput;
  const check = checkRunOptions(input);
  if (!check.ok) throw optionsError(problemLines(check.problems, RUN_OPTIONS, given));
  // The simulator's flags with --url would change nothing (issue #35). Judged on what the user typed: a sweep
  // passes each point the URL of the simulator it started, with the flags that started it.
  const unused = (['simProfile', 'simFaults', 'simReplicas', 'simRouter'] as const).filter((key) => values.url !== undefined && values[key] !== undefined);
  if (unused.length > 0) throw optionsError(problemLines(unused.map((key) => ({ key, message: 'sets the built-in simulator, which a run with --url does not start: drop one' })), RUN_OPTIONS, given));
  return { input, plan: planOf(check.options, check.given, { defaulted: check.defaulted, notes: check.notes }) };
}
