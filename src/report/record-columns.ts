import type { RequestRecord } from '../metrics/record.js';
import { REFERENCE_STATS_KEYS } from './stats-json.js';

/**
 * The per-request columns of the CSV and of the Excel "Raw data" sheet: the reference's keys first, in its order, then
 * chatload's own fields, then any other scalar field found in the records (fields added later, e.g. the open-loop
 * `scheduled_at_ms`), in order of first appearance. `itl_ms` (an array) is not a column here; the CSV appends it.
 */
export const RECORD_COLUMNS = [
  ...REFERENCE_STATS_KEYS,
  'turn',
  'conversation_index',
  'status',
  'error_kind',
  'http_status',
  'error',
  'warmup',
  'retries',
  'sent_at_ms',
  'first_token_at_ms',
  'done_at_ms',
  'e2el_ms',
  'ttft_content_ms',
  'ttft_reasoning_ms',
  'cached_tokens',
  'expected_cached_tokens',
  'expected_cached_tokens_infinite',
  'expected_cached_tokens_own_history',
  'input_tokens_source',
  'output_tokens_source',
  'max_tokens',
  'finish_reason',
] as const;

/** A cell value of a record column: a number, string, boolean or null (missing). */
export type ColumnValue = number | string | boolean | null;

/** The columns for these records: RECORD_COLUMNS plus the extra scalar fields any record has (never `itl_ms`). */
export function recordColumns(records: readonly RequestRecord[]): string[] {
  const columns: string[] = [...RECORD_COLUMNS];
  const known = new Set<string>([...columns, 'itl_ms']);
  for (const r of records) {
    for (const [key, value] of Object.entries(r)) {
      if (known.has(key)) continue;
      if (value === null || ['number', 'string', 'boolean'].includes(typeof value)) {
        known.add(key);
        columns.push(key);
      }
    }
  }
  return columns;
}

/** The value of one column of a record; null when the record lacks it or holds a non-scalar there. */
export function columnValue(record: RequestRecord, column: string): ColumnValue {
  const value = (record as unknown as Record<string, unknown>)[column];
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  return null;
}
