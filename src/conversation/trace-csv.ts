import { DatasetError, shownValue, type DatasetLocation } from '../errors/index.js';
import { nsBetween, parseWallClock, type WallClock } from './wall-clock.js';

/*
 * Production traces in CSV with one request a row and no prefix structure (docs/DATASETS.md): the Azure LLM inference
 * traces (`TIMESTAMP,ContextTokens,GeneratedTokens`, 2023 and 2024 releases) and BurstGPT (`Timestamp,Model,Request
 * tokens,Response tokens,Total tokens,Log Type`). Each format is one entry of CSV_TRACE_FORMATS: its columns and how a
 * row becomes a request; a new CSV format is a new entry. Rows are kept as columns of typed arrays (20 bytes a row), so
 * `trace stats` reads millions of rows in bounded memory; a replay makes one Conversation per row in its window.
 */

/** The CSV trace formats. */
export type CsvTraceFormat = 'azure' | 'burstgpt';

/** One request read from a row. */
export interface CsvTraceRow {
  /** Seconds on the trace's own clock: from the first row (Azure), or the Timestamp column (BurstGPT). */
  atSec: number;
  inputLength: number;
  outputLength: number;
  /** BurstGPT's Model and Log Type, as written. */
  model?: string;
  logType?: string;
}

/** A CSV trace format: its header's columns (as documented) and a row's reading. */
interface CsvFormatSpec {
  columns: readonly string[];
  /** Reads one row's fields (by column index). `at` locates errors. */
  read(fields: readonly string[], at: DatasetLocation, state: { origin?: WallClock }): CsvTraceRow;
}

/** A `field: expected ..., got ...` error at `at`. */
function fieldError(at: DatasetLocation, field: string, expected: string, got: unknown): DatasetError {
  return new DatasetError(at, `${field}: expected ${expected}, got ${shownValue(got)}`);
}

/** A count of tokens: a whole number >= 0 (written `12` or `12.0`). */
function tokens(text: string, field: string, at: DatasetLocation): number {
  if (!/^\d+(\.0*)?$/.test(text)) throw fieldError(at, field, 'a whole number of tokens >= 0', text);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw fieldError(at, field, 'a whole number of tokens >= 0', text);
  return n;
}

/** The formats, by name. The columns are those of the releases' documentation (docs/DATASETS.md cites them). */
export const CSV_TRACE_FORMATS: Readonly<Record<CsvTraceFormat, CsvFormatSpec>> = {
  azure: {
    columns: ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'],
    read(fields, at, state) {
      const clock = parseWallClock(fields[0]!);
      if (clock === undefined) throw fieldError(at, 'TIMESTAMP', 'a time such as 2023-11-16 18:15:46.6805900', fields[0]);
      state.origin ??= clock;
      return { atSec: nsBetween(state.origin, clock) / 1e9, inputLength: tokens(fields[1]!, 'ContextTokens', at), outputLength: tokens(fields[2]!, 'GeneratedTokens', at) };
    },
  },
  burstgpt: {
    columns: ['Timestamp', 'Model', 'Request tokens', 'Response tokens', 'Total tokens', 'Log Type'],
    read(fields, at) {
      const t = fields[0]!;
      if (!/^\d+(\.\d+)?$/.test(t)) throw fieldError(at, 'Timestamp', 'seconds >= 0', t);
      const inputLength = tokens(fields[2]!, 'Request tokens', at);
      const outputLength = tokens(fields[3]!, 'Response tokens', at);
      tokens(fields[4]!, 'Total tokens', at);
      return { atSec: Number(t), inputLength, outputLength, model: fields[1]!, logType: fields[5]! };
    },
  },
};

/** A CSV line's fields, trimmed; a field in double quotes may hold commas (`""` is a quote). */
export function csvFields(line: string): string[] {
  if (!line.includes('"')) return line.split(',').map((f) => f.trim());
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted && c === '"' && line[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      out.push(field.trim());
      field = '';
    } else field += c;
  }
  out.push(field.trim());
  return out;
}

const normalized = (name: string): string => name.trim().toLowerCase().replace(/^\uFEFF/, '');

/** The format whose header `line` is (its columns in any order, names case-insensitive), or undefined. */
export function detectCsvTraceFormat(line: string): CsvTraceFormat | undefined {
  const names = csvFields(line.replace(/^\uFEFF/, '')).map(normalized).sort().join(',');
  for (const [format, spec] of Object.entries(CSV_TRACE_FORMATS) as Array<[CsvTraceFormat, CsvFormatSpec]>) {
    if (spec.columns.map(normalized).sort().join(',') === names) return format;
  }
  return undefined;
}

/**
 * Where each documented column of `format` is in a line whose `fields` are a header (names in any order,
 * case-insensitive), or undefined when the line is no header (then it is a row in the documented order).
 */
export function csvColumnOrder(format: CsvTraceFormat, fields: readonly string[]): number[] | undefined {
  const names = fields.map(normalized);
  const order = CSV_TRACE_FORMATS[format].columns.map((c) => names.indexOf(c.toLowerCase()));
  return order.every((i) => i >= 0) ? order : undefined;
}

/** Which rows are replayed (the parsed --trace-filter; options/values/trace-filter.ts). */
export interface CsvTraceFilter {
  models?: readonly string[];
  logTypes?: readonly string[];
  failed: 'skip' | 'keep' | 'only';
}

/** How a CSV trace is read: --input-format, --trace-block-size, --trace-window, --trace-filter. */
export interface CsvTraceReadOptions {
  blockSize?: number;
  window?: { startSec: number; endSec?: number };
  filter?: CsvTraceFilter;
}

/** What the reading left out, for `trace stats` and the run's start. */
export interface CsvTraceCounts {
  /** Data rows in the file. */
  rows: number;
  /** Failed requests (zero output tokens) left out (failed=skip). */
  failedSkipped: number;
  /** Rows left out by --trace-filter's model, log or failed=only. */
  filteredOut: number;
  /** Rows outside --trace-window. */
  outsideWindow: number;
}

/** Default tokens per block of a CSV trace's prompts: every block is the request's own, so the size only sets how many ids a prompt takes. */
export const CSV_TRACE_BLOCK_SIZE = 512;
