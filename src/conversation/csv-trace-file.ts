import { letLoopGo } from '../util/loop-turns.js';
import { utf8Lines } from '../util/utf8-text.js';
import { checkReadable, firstLine } from './dataset-file.js';
import type { TraceReadOptions } from './trace.js';
import { detectCsvTraceFormat, type CsvTraceFormat } from './trace-csv.js';
import { CsvTraceReader } from './trace-csv-reader.js';

// A CSV trace file (Azure, BurstGPT): its format from --input-format or its header line, and its rows read.

/** What reading a CSV trace file takes of the load options (LoadOptions has them all). */
export interface CsvTraceFileOptions {
  trace?: TraceReadOptions;
  allowInvalidUtf8?: boolean;
  warn?: (message: string) => void;
}

/** The CSV trace format of `file`: forced by --input-format, or its first line is a CSV trace's header. */
export async function csvTraceFormatOf(file: string, options: CsvTraceFileOptions): Promise<CsvTraceFormat | undefined> {
  await checkReadable(file);
  return csvFormatOfReadable(file, options);
}

/** csvTraceFormatOf of a file already checked readable (loadDataset checks it once for every format). */
export async function csvFormatOfReadable(file: string, options: CsvTraceFileOptions): Promise<CsvTraceFormat | undefined> {
  const forced = options.trace?.format;
  if (forced === 'azure' || forced === 'burstgpt') return forced;
  if (forced !== undefined || /\.(jsonl|ndjson|json)$/i.test(file)) return undefined;
  return detectCsvTraceFormat(await firstLine(file));
}

/** Rows read between two lets of the event loop: about 1 ms of parsing (1.8 us a row, measured on 1M BurstGPT-style rows). */
const CSV_ROWS_PER_SLICE = 500;

/**
 * Reads a CSV trace (Azure, BurstGPT) as a stream of lines into a CsvTraceReader: its rows as columns, with
 * --trace-filter and --trace-window applied as they are read. The event loop is let go every CSV_ROWS_PER_SLICE rows.
 */
export async function readCsvTrace(file: string, format: CsvTraceFormat, options: CsvTraceFileOptions = {}): Promise<CsvTraceReader> {
  const reader = new CsvTraceReader(file, format, options.trace);
  let lineNumber = 0;
  for await (const line of utf8Lines(file, { allowInvalidUtf8: options.allowInvalidUtf8 === true, warn: options.warn, maxLineChars: 64 * 1024 })) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    reader.add(line, lineNumber);
    if (lineNumber % CSV_ROWS_PER_SLICE === 0) await letLoopGo();
  }
  return reader;
}
