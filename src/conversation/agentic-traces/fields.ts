import { DatasetError, shownValue, type DatasetLocation } from '../../errors/index.js';

/** Field readers of the agentic loaders: each throws a one-line DatasetError naming the place and the field. */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function fieldError(at: DatasetLocation, field: string, expected: string, got: unknown): DatasetError {
  return new DatasetError(at, `${field}: expected ${expected}, got ${shownValue(got)}`);
}

/** An integer >= `min`. */
export function intField(value: unknown, field: string, at: DatasetLocation, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) throw fieldError(at, field, `an integer >= ${min}`, value);
  return value;
}

/** A finite number >= 0. */
export function timeField(value: unknown, field: string, at: DatasetLocation): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw fieldError(at, field, 'a number >= 0', value);
  return value;
}

/** A list of integers >= 0 (KV block hash ids). */
export function idsField(value: unknown, field: string, at: DatasetLocation): number[] {
  if (!Array.isArray(value)) throw fieldError(at, field, 'a list of integers', value);
  for (const id of value) if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) throw fieldError(at, field, 'integers >= 0', id);
  return value as number[];
}

/** A non-empty string or a number, as a string (ids). */
export function idField(value: unknown, field: string, at: DatasetLocation): string {
  if ((typeof value !== 'string' || value === '') && typeof value !== 'number') throw fieldError(at, field, 'a non-empty string or a number', value);
  return String(value);
}
