import { InvalidArgumentError } from 'commander';

/**
 * Commander argument parsers of the commands without an option table (convert, merge): each returns a typed value
 * or throws InvalidArgumentError with what was expected. The run options read their values through options/define.ts.
 */

/** A whole number >= 1. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer.');
  return n;
}

/** A whole number. */
export function integer(value: string): number {
  const n = Number(value);
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected an integer.');
  return n;
}

/** The longest wait a duration flag takes: a year (a wait is always bounded). */
const MAX_DURATION_MS = 365 * 24 * 3600 * 1000;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** A duration >= 0 in ms: seconds by default (`90`), or with a unit (`500ms`, `90s`, `10m`, `2h`). */
export function durationMs(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$/.exec(value);
  const ms = match === null ? Number.NaN : Number(match[1]) * DURATION_UNITS[match[2] ?? 's']!;
  if (!(ms <= MAX_DURATION_MS)) throw new InvalidArgumentError('expected a duration >= 0 of at most a year: seconds (90) or with a unit (500ms, 90s, 10m, 2h).');
  return Math.round(ms);
}
