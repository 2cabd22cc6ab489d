import { InvalidArgumentError } from 'commander';

/** Commander argument parsers: each returns a typed value or throws InvalidArgumentError with what was expected. */

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer.');
  return n;
}

export function integer(value: string): number {
  const n = Number(value);
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected an integer.');
  return n;
}

export function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number >= 0.');
  return n;
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number > 0.');
  return n;
}

/** `--warmup-percentages 0%,50%` (the % is optional) → [0, 50]. */
export function percentList(value: string): number[] {
  return value.split(',').map((part) => {
    const n = Number(part.trim().replace(/%$/, ''));
    if (part.trim() === '' || !Number.isFinite(n) || n < 0 || n >= 100) {
      throw new InvalidArgumentError(`expected comma-separated percentages in [0, 100), e.g. 0%,50%; got ${JSON.stringify(part)}.`);
    }
    return n;
  });
}

/** A JSON object, for --extra-body. */
export function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`expected a JSON object: ${(error as Error).message}.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError('expected a JSON object, e.g. \'{"top_p": 0.9}\'.');
  return parsed as Record<string, unknown>;
}

/** Repeatable flags collect into a list. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
