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
