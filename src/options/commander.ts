import { Option, type Command } from 'commander';
import * as z from 'zod';
import { flagHelp, HELP_GROUPS, type HelpGroup, type OptionSpec, type OptionTable } from './define.js';
import type { OptionProblem } from './run-options.js';

/*
 * An option table as commander options, and back. Commander parses the command line only (which flags, their text,
 * --help); it applies no defaults and checks no values: the schema does both, so that every problem is reported at
 * once, and library callers get the very same defaults.
 */

/** The --help heading of a group. */
export function groupHeading(group: HelpGroup): string {
  return `${HELP_GROUPS[group]}:`;
}

/** Repeatable flags collect into a list. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The values an option's schema allows when it is a list of words (e.g. --endpoint's chat, responses, completions). */
const CHOICES = new WeakMap<Option, readonly string[]>();

/**
 * The words `option` takes, when its table entry's schema is an enum: for shell completion. (Commander's own
 * choices() would check them too, in its words: the schema checks every value, so only this list is kept.)
 */
export function optionChoices(option: Option): readonly string[] | undefined {
  return CHOICES.get(option);
}

/** The words of an enum schema, looking through the optional and default wrappers `option()` puts around it. */
function enumValues(schema: z.ZodType): string[] | undefined {
  let inner: unknown = schema;
  for (let depth = 0; depth < 4 && inner !== undefined; depth++) {
    if (inner instanceof z.ZodEnum) return inner.options.map(String);
    inner = (inner as { def?: { innerType?: unknown } }).def?.innerType;
  }
  return undefined;
}

/** The commander options of one table entry: its flag, and its negation if it has one. */
function commanderOptions(spec: OptionSpec, table: OptionTable): Option[] {
  return flagHelp(spec, table).map(({ flags, help }, i) => {
    const option = new Option(flags, help).helpGroup(groupHeading(spec.group));
    const choices = i === 0 ? enumValues(spec.field) : undefined;
    if (choices !== undefined) CHOICES.set(option, choices);
    if (i === 0 && spec.env !== undefined) option.env(spec.env);
    if (spec.required === true) option.makeOptionMandatory();
    if (spec.repeatable === true) option.argParser(collect);
    return option;
  });
}

/** Adds every option of `table` to `command`, each under its help group. */
export function addTableOptions(command: Command, table: OptionTable): Command {
  for (const spec of Object.values(table)) for (const option of commanderOptions(spec, table)) command.addOption(option);
  return command;
}

/** What a command line said about a table's options. */
export interface CommandValues {
  /** The value of each option given on the command line or by its environment variable, read (`readInt`, ...). */
  values: Record<string, unknown>;
  /** Values whose text could not be read (not a number, not JSON, ...). */
  problems: OptionProblem[];
  /** The environment variable each value came from, for the options it set. */
  fromEnv: Record<string, string>;
  /** The text each value was given as, for an error to name (`--repeat: expected ..., got "1e6"`). */
  texts: Record<string, string>;
}

/** The values of `table`'s options in a parsed `command`: only those the user gave (flag or environment), read. */
export function readTableOptions(command: Command, table: OptionTable): CommandValues {
  const parsed = command.opts();
  const out: CommandValues = { values: {}, problems: [], fromEnv: {}, texts: {} };
  for (const [key, spec] of Object.entries(table)) {
    const attribute = new Option(spec.flags).attributeName();
    const source = command.getOptionValueSource(attribute);
    // Commander's implicit defaults (a lone --no-x defaults x to true) are not the user's: the schema has the defaults.
    if (source !== 'cli' && source !== 'env') continue;
    if (source === 'env' && spec.env !== undefined) out.fromEnv[key] = spec.env;
    const raw: unknown = parsed[attribute];
    if (typeof raw === 'string') out.texts[key] = raw;
    if (spec.read === undefined) {
      out.values[key] = raw;
      continue;
    }
    const read = spec.read.safeParse(raw);
    if (read.success) out.values[key] = read.data;
    else for (const issue of read.error.issues) out.problems.push({ key, message: issue.message });
  }
  return out;
}

/**
 * Each given value checked against its own option's schema alone: the problems to report beside values that could
 * not be read (rules between options wait until every value reads, so that they never judge a missing one).
 */
export function fieldProblems(values: Readonly<Record<string, unknown>>, table: OptionTable): OptionProblem[] {
  const problems: OptionProblem[] = [];
  for (const [key, value] of Object.entries(values)) {
    const checked = table[key]?.field.safeParse(value);
    if (checked !== undefined && !checked.success) for (const issue of checked.error.issues) problems.push({ key, message: issue.message });
  }
  return problems;
}
