import type { OptionSpec } from './define.js';
import { RUN_OPTIONS } from './run-options.js';

/** Quotes a word for a POSIX shell when it needs it. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The long flag of a spec (`--num-clients` of `-p, --num-clients <n>`). */
function longFlag(flags: string): string {
  return flags.split(/[ ,]+/).find((f) => f.startsWith('--')) ?? flags.split(/[ ,]+/)[0]!;
}

function words(spec: OptionSpec, value: unknown): string[] {
  const flag = longFlag(spec.flags);
  if (typeof value === 'boolean') {
    // `--no-report` is declared with default true: false is the flag itself; others have a --no-x negation.
    if (flag.startsWith('--no-')) return value ? [] : [flag];
    if (value) return [flag];
    return spec.negation === undefined ? [] : [longFlag(spec.negation.flags)];
  }
  if (Array.isArray(value)) {
    if (spec.repeatable) return value.flatMap((v) => [flag, String(v)]);
    return spec.flags.includes('...') ? [flag, ...value.map(String)] : [flag, value.map(String).join(',')];
  }
  if (value !== null && typeof value === 'object') return [flag, JSON.stringify(value)];
  return [flag, String(value)];
}

/**
 * The `chatload run` command line that gives `config` (results.json's config: option keys and values), with the
 * user's flag names from the option table: each option whose value differs from its default (and the demo's
 * default), in --help order. A reconstruction: values read from text show as the run recorded them (`--warmup-percentages 0,50`).
 */
export function commandLineOf(config: Readonly<Record<string, unknown>>, command = 'run'): string {
  const out = ['chatload', command];
  for (const [key, spec] of Object.entries(RUN_OPTIONS) as Array<[string, OptionSpec]>) {
    const value = config[key];
    if (value === undefined || sameValue(value, spec.default) || (spec.demoDefault !== undefined && sameValue(value, spec.demoDefault.value))) continue;
    out.push(...words(spec, value));
  }
  return out.map(shellWord).join(' ');
}

/** The long flag of each run option key (`numClients` → `--num-clients`): how reports name options. */
export function flagNameOf(key: string): string | undefined {
  const spec = (RUN_OPTIONS as Record<string, OptionSpec | undefined>)[key];
  return spec === undefined ? undefined : longFlag(spec.flags);
}

/**
 * One run option as a report's Options table shows it (issue #34: `--no-stream true` read as "did not stream" for a
 * run that streamed): its long flag, and its value as that flag means it. A switch is `set` when the run's value is
 * what giving the flag does, else `not set` (`--no-stream: not set` for a streamed run); other values as text.
 */
export function optionRow(key: string, value: unknown): { option: string; value: string } {
  const spec = (RUN_OPTIONS as Record<string, OptionSpec | undefined>)[key];
  if (spec === undefined) return { option: key, value: valueText(value) };
  const flag = longFlag(spec.flags);
  if (typeof value === 'boolean') return { option: flag, value: words(spec, value)[0] === flag ? 'set' : 'not set' };
  return { option: flag, value: valueText(value) };
}

/** A value as text: strings as they are, the rest as JSON. */
function valueText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}
