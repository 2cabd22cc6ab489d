import * as z from 'zod';
import { ConfigError } from '../errors/config-error.js';

/*
 * How one option is declared, once: its flags (the reference tool's names and aliases), help group, help text,
 * schema (validation, with .transform() into its typed value), default, and how the command line's text becomes a
 * value. The commander options, the zod object schema, --help and docs/OPTIONS.md are all made from these.
 */

/** The --help groups (commander's helpGroup headings) and the sections of docs/OPTIONS.md, in display order. */
export const HELP_GROUPS = {
  target: 'Target server',
  dataset: 'Dataset',
  requests: 'Requests',
  load: 'Load',
  limits: 'Stop conditions and timeouts',
  outputs: 'Outputs',
  scale: 'Scale: worker threads and shards',
  simulator: 'Built-in simulator (when there is no --url)',
  sweep: 'Sweep',
} as const;

/** One help group. */
export type HelpGroup = keyof typeof HELP_GROUPS;

/** What every option declares besides its schema and default. */
export interface OptionText {
  /** Commander flags as the user types them, short alias first, with the value placeholder: `-p, --num-clients <n>`. */
  readonly flags: string;
  readonly group: HelpGroup;
  /** One line of help, without the default (that is added from `default`, `defaultText` and `demoDefault`). */
  readonly help: string;
  /** The default in words, when it is not a value (`the request timeout`), or a value shown differently (`0%`). */
  readonly defaultText?: string;
  /**
   * The built-in demo's default (no --url and no -i): applied before the schema when the user gave neither this
   * option nor the option named (by key) in `unlessGiven`.
   */
  readonly demoDefault?: { readonly value: unknown; readonly unlessGiven?: string };
  /** An environment variable that sets the option when the flag is not given (commander's `.env()`). */
  readonly env?: string;
  /** A boolean's second flag that sets it false (`--no-early-stop`), with its own help. */
  readonly negation?: { readonly flags: string; readonly help: string };
  /** The option must be given (commander's mandatory option): for a command's own inputs, never a run option. */
  readonly required?: boolean;
  /** The flag may be given many times; the values collect into a list (`--header`). */
  readonly repeatable?: boolean;
  /**
   * How the command line's text becomes the value the schema takes (a zod schema from the text: `readInt`, ...).
   * Without it the value is used as commander parsed it (text, a list for `<x...>`, true for a flag).
   */
  readonly read?: z.ZodType;
}

/** One declared option: its text, and its schema with the default applied (`field`), from which the object schema is made. */
export interface OptionSpec<F extends z.ZodType = z.ZodType> extends OptionText {
  /** The schema with the default applied (`prefault`, so the default is validated and transformed like a given value). */
  readonly field: F;
  /** The default as a user would give it; undefined when there is none. */
  readonly default?: unknown;
}

/** A table of options by their camelCase name (the library's key, and the key in results.json's `config`). */
export type OptionTable = Readonly<Record<string, OptionSpec>>;

/** Declares one option. With a `default`, the option is optional and takes it; without, it stays undefined when not given. */
export function option<S extends z.ZodType>(spec: OptionText & { schema: S; default: z.input<S> }): OptionSpec<z.ZodPrefault<S>>;
export function option<S extends z.ZodType>(spec: OptionText & { schema: S; default?: undefined }): OptionSpec<z.ZodOptional<S>>;
export function option(spec: OptionText & { schema: z.ZodType; default?: unknown }): OptionSpec {
  const { schema, ...text } = spec;
  return Object.freeze({ ...text, field: spec.default === undefined ? schema.optional() : schema.prefault(spec.default) });
}

// Value schemas shared by many options, with the messages a CLI user reads after the flag name. A value of the wrong
// type (a CLI text that is no number reads as NaN) gets the same message as a number out of range.

/** A number schema whose every message, type included, is `expected`. */
const numberExpected = (expected: string): z.ZodNumber => z.number({ error: expected });

/** A whole number. */
export const integer = numberExpected('expected an integer').int('expected an integer');
/** A whole number >= 1. */
export const positiveInt = numberExpected('expected a positive integer').int('expected a positive integer').positive('expected a positive integer');
/** A whole number >= 0. */
export const nonNegativeInt = numberExpected('expected an integer >= 0').int('expected an integer >= 0').nonnegative('expected an integer >= 0');
/** A finite number > 0. */
export const positiveNumber = numberExpected('expected a number > 0').positive('expected a number > 0');
/** A finite number >= 0. */
export const nonNegativeNumber = numberExpected('expected a number >= 0').nonnegative('expected a number >= 0');
/**
 * The longest time chatload takes for any wait or duration: a year, in seconds. Past it a value is a slip (ms given
 * for s, a zero too many) and no run is for it; waits up to it work, past setTimeout's 24.8 days (util/long-timer.ts).
 * Refused at once with exit 2 (issue #35: 30 days fired after 1 ms, 1e300 s waited for ever).
 */
export const MAX_SECONDS = 365 * 24 * 3600;
const AT_MOST_A_YEAR = `expected at most ${MAX_SECONDS.toLocaleString('en-US')} seconds (a year)`;
/** Seconds > 0, at most a year. */
export const positiveSeconds = positiveNumber.max(MAX_SECONDS, AT_MOST_A_YEAR);
/** Seconds >= 0, at most a year. */
export const nonNegativeSeconds = nonNegativeNumber.max(MAX_SECONDS, AT_MOST_A_YEAR);
/** A fraction in [0, 1]. */
export const fraction = numberExpected('expected a fraction in [0, 1]').min(0, 'expected a fraction in [0, 1]').max(1, 'expected a fraction in [0, 1]');
/** A non-empty string. */
export const text = z.string().min(1, 'expected a non-empty value');
/**
 * For a URL given without its scheme (`localhost:8000`, which parses with the scheme "localhost:", or
 * `10.0.0.5:8000/v1`), what to write instead: `, got "localhost:8000": did you mean http://localhost:8000?`.
 */
function schemeHint(input: unknown): string {
  // A scheme mistyped (`http//x`, `https:/x`) has no one right fix: the plain message says what is expected.
  if (typeof input !== 'string' || input.includes('://') || /^https?\b/i.test(input.trim()) || !/^[\w.-]+(:\d+)?(\/|$)/.test(input.trim())) return '';
  const withScheme = `http://${input.trim()}`;
  return URL.canParse(withScheme) ? `, got ${JSON.stringify(input)}: did you mean ${withScheme}?` : '';
}

/** An http:// or https:// URL. */
export const httpUrl = z
  .url({ protocol: /^https?$/, error: (issue) => `expected an http:// or https:// URL${schemeHint(issue.input)}` })
  // Port 0 asks the OS for any free port when listening; as a server's address it reaches nothing (issue #35).
  // (zod runs the refinement even after the URL check failed: an unparsable one is left to that check's message.)
  .refine((url) => !URL.canParse(url) || new URL(url).port !== '0', { error: 'port 0 is no server\'s port; expected the port the server listens on' });

// Readers: how command-line text becomes the value a schema takes. Numbers read as NaN when the text is not one, so
// that the schema says what it expects (`expected a positive integer`), as it does to a library caller.

/** `<n>` as a whole number (decimal digits only: not 1e3, not 0x10). */
export const readInt = z.string().transform((value) => (/^\s*-?\d+\s*$/.test(value) ? Number(value) : Number.NaN));

/** `<x>` as a decimal number. */
export const readNumber = z.string().transform((value) => (/^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(value) ? Number(value) : Number.NaN));

/** `<json>` parsed as JSON. */
export const readJson = z.string().transform((value, ctx): unknown => {
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `expected a JSON object: ${(error as Error).message}` });
    return z.NEVER;
  }
});

/** `0%,50%` (the % is optional) as a list of numbers. */
export const readPercentList = z.string().transform((value, ctx): number[] => {
  const parts = value.split(',').map((part) => part.trim().replace(/%$/, ''));
  const bad = parts.find((part) => part === '' || !Number.isFinite(Number(part)));
  if (bad === undefined) return parts.map(Number);
  ctx.addIssue({ code: 'custom', message: `expected comma-separated percentages in [0, 100), e.g. 0%,50%; got ${JSON.stringify(bad)}` });
  return z.NEVER;
});

/** `<a,b,c>` as a list of trimmed, non-empty words. */
export const readWordList = z.string().transform((value): string[] =>
  value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== ''),
);

/** The long flag of an option (`--num-clients`): how errors, --help and the docs name it. */
export function longFlag(spec: Pick<OptionText, 'flags'>): string {
  return /--[a-z0-9-]+/.exec(spec.flags)?.[0] ?? spec.flags;
}

/** A default value as --help shows it: text as it is, lists comma-separated; nothing for false and empty lists. */
function formatValue(value: unknown): string | undefined {
  if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) return undefined;
  return Array.isArray(value) ? value.join(',') : String(value);
}

/**
 * The default as --help and the docs say it, demo default included: `120`, `1; 16 for the built-in demo`,
 * `the request timeout`. Undefined when there is nothing to say (booleans say theirs on their flags).
 */
export function describeDefault(spec: OptionSpec, table: OptionTable): string | undefined {
  if (typeof spec.default === 'boolean') return undefined;
  const base = spec.defaultText ?? formatValue(spec.default);
  const demo = spec.demoDefault;
  if (demo === undefined) return base;
  const other = demo.unlessGiven === undefined ? undefined : table[demo.unlessGiven];
  const unless = other === undefined ? '' : ` without ${longFlag(other)}`;
  return `${base ?? 'none'}; ${formatValue(demo.value)} for the built-in demo${unless}`;
}

/** The help of each flag of an option: the main flag, then its negation if it has one. */
export function flagHelp(spec: OptionSpec, table: OptionTable): Array<{ flags: string; help: string }> {
  const lines = [{ flags: spec.flags, help: spec.help }];
  if (spec.negation !== undefined) lines.push({ flags: spec.negation.flags, help: spec.negation.help });
  if (typeof spec.default === 'boolean') {
    // A boolean's default is said on the flag that selects it: `--early-stop` (the default, except for the demo).
    const chosen = spec.default === !spec.flags.includes('--no-') ? lines[0] : lines[1];
    const demo = spec.demoDefault !== undefined && spec.demoDefault.value !== spec.default ? ', except for the built-in demo' : '';
    if (chosen !== undefined) chosen.help += ` (the default${demo})`;
    return lines;
  }
  const described = describeDefault(spec, table);
  if (described !== undefined) lines[0]!.help += ` (default: ${described})`;
  return lines;
}

/**
 * `input` turned into a typed value by one of the option-value parsers (which throw a ConfigError naming their
 * flag). The parser's message becomes the issue, without the flag: the error adds the flag the user typed.
 */
export function parsedWith<I, T>(input: z.ZodType<I>, parse: (value: I) => T): z.ZodType<T, I> {
  return input.transform((value, ctx): T => {
    try {
      return parse(value);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      const message = error.message.replace(/^(--[a-z0-9-]+)?:\s*/, '');
      ctx.addIssue({ code: 'custom', message: error.hint === undefined ? message : `${message} (${error.hint})` });
      return z.NEVER;
    }
  }) as unknown as z.ZodType<T, I>;
}

/** Text turned into a typed value by an option-value parser (see parsedWith). */
export function parsedText<T>(parse: (text: string) => T): z.ZodType<T, string> {
  return parsedWith(z.string(), parse);
}

/** The same option (schema, default, reader) with other text: for a command that shares it but says it its own way. */
export function retold<F extends z.ZodType>(spec: OptionSpec<F>, text: Partial<Pick<OptionText, 'group' | 'help' | 'defaultText'>>): OptionSpec<F> {
  return Object.freeze({ ...spec, ...text });
}
