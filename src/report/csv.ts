import { writePiecesAtomic, writeStreamAtomic } from '../store/atomic-write.js';
import type { RequestRecord } from '../metrics/record.js';
import { columnValue, recordColumns, type ColumnValue } from './record-columns.js';
import { streamRequestsJsonl } from '../store/requests-jsonl.js';
import { normalizeRecord } from '../store/run-data.js';

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
  yield requestsCsvHeader(columns);
  for (const r of records) yield requestsCsvRow(r, columns);
}

/** The CSV's header line (with its CRLF) for these record columns (recordColumns), then `itl_ms`. */
export function requestsCsvHeader(columns: readonly string[]): string {
  return `${[...columns, 'itl_ms'].map(csvField).join(',')}\r\n`;
}

/** One record's CSV line (with its CRLF): its value in each of `columns`, then its `itl_ms` as a JSON array. */
export function requestsCsvRow(record: RequestRecord, columns: readonly string[]): string {
  const cells = columns.map((c) => csvField(columnValue(record, c)));
  cells.push(csvField(JSON.stringify(Array.isArray(record.itl_ms) ? record.itl_ms : [])));
  return `${cells.join(',')}\r\n`;
}

/** Writes the records as CSV to `path` (through a temporary file and a rename, so readers never see half a file). */
export function writeRequestsCsv(path: string, records: readonly RequestRecord[]): void {
  writePiecesAtomic(path, (write) => {
    for (const line of requestsCsvLines(records)) write(line);
  });
}

/** Records whose extra columns are found at once: recordColumns() of a batch, merged in file order. */
const COLUMN_BATCH = 1024;

/**
 * Writes every record of a requests.jsonl as CSV to `path`, exactly as writeRequestsCsv would write them all (records
 * normalized as loadRunData does), but streamed: memory is bounded by one batch of records, not by the file. Two
 * passes over the file: the columns (extra record fields appear as columns), then the rows. Records appended to the
 * file between the passes (a run still writing) are left out. Resolves with the data rows written (count).
 */
export async function writeRequestsCsvFromJsonl(path: string, jsonlPath: string): Promise<number> {
  const columns: string[] = [];
  const known = new Set<string>();
  let batch: RequestRecord[] = [];
  const flush = (): void => {
    // recordColumns keeps first-appearance order within a batch; batches come in file order, so the merged list is
    // recordColumns() of the whole file.
    for (const column of recordColumns(batch)) {
      if (!known.has(column)) {
        known.add(column);
        columns.push(column);
      }
    }
    batch = [];
  };
  const rows = await streamRequestsJsonl(jsonlPath, (raw) => {
    batch.push(normalizeRecord(raw));
    if (batch.length >= COLUMN_BATCH) flush();
  });
  flush();

  let written = 0;
  await writeStreamAtomic(path, async (write) => {
    write(requestsCsvHeader(columns));
    await streamRequestsJsonl(jsonlPath, (raw) => {
      if (written >= rows) return;
      written++;
      write(requestsCsvRow(normalizeRecord(raw), columns));
    });
  });
  return written;
}
