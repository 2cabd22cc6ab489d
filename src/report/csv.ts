import { closeSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { tempPathFor } from './atomic-write.js';
import type { RequestRecord } from '../metrics/record.js';
import { columnValue, recordColumns, type ColumnValue } from './record-columns.js';

/**
 * Formats one CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF; quotes doubled. null is an empty
 * field. A string that a spreadsheet would run as a formula (starting with = + - @, tab or CR) gets a leading
 * apostrophe: error messages and conversation ids come from outside, and "CSV injection" is a real attack.
 */
export function csvField(value: ColumnValue): string {
  if (value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The per-request records as CSV text: a header row, then one row per record in file order (warmup and failed records
 * included; see the `warmup` and `status` columns). Columns: see record-columns.ts, then `itl_ms` as a JSON array.
 * Line ends are CRLF, as RFC 4180 says.
 */
export function toRequestsCsv(records: readonly RequestRecord[]): string {
  return [...requestsCsvLines(records)].join('');
}

/** The CSV of toRequestsCsv, one line (with its CRLF) at a time, so a large run is never one huge string. */
export function* requestsCsvLines(records: readonly RequestRecord[]): Generator<string> {
  const columns = recordColumns(records);
  yield `${[...columns, 'itl_ms'].map(csvField).join(',')}\r\n`;
  for (const r of records) {
    const cells = columns.map((c) => csvField(columnValue(r, c)));
    cells.push(csvField(JSON.stringify(Array.isArray(r.itl_ms) ? r.itl_ms : [])));
    yield `${cells.join(',')}\r\n`;
  }
}

/** Writes the records as CSV to `path` (through a temporary file and a rename, so readers never see half a file). */
export function writeRequestsCsv(path: string, records: readonly RequestRecord[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  const fd = openSync(tmp, 'w');
  try {
    let batch = '';
    for (const line of requestsCsvLines(records)) {
      batch += line;
      if (batch.length > 1 << 20) {
        writeSync(fd, batch);
        batch = '';
      }
    }
    if (batch.length > 0) writeSync(fd, batch);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
