import { ChatloadError, ExitCode } from './chatload-error.js';

/** Where in a dataset a problem was found. Every field that is known is named in the message. */
export interface DatasetLocation {
  file: string;
  /** 1-based line, for JSONL files and JSON syntax errors. */
  line?: number;
  column?: number;
  /** 0-based byte offset in the file, for bytes that are not UTF-8. */
  byteOffset?: number;
  /** 0-based row of a table (a Hugging Face dataset's Parquet or Arrow file), and its row group or record batch. */
  row?: number;
  rowGroup?: number;
  /** A table's column by name (not to be confused with `column`, a character's in a line). */
  field?: string;
  conversationIndex?: number;
  conversationId?: string;
  messageIndex?: number;
}

/** A dataset file that cannot be used as given (exit code 2). The message is one line: where, then what was expected. */
export class DatasetError extends ChatloadError {
  readonly location: DatasetLocation;

  constructor(location: DatasetLocation, problem: string, options: { cause?: unknown } = {}) {
    super(`${formatLocation(location)}: ${problem}`, { ...options, exitCode: ExitCode.badInput });
    this.name = 'DatasetError';
    this.location = location;
  }
}

function formatLocation(at: DatasetLocation): string {
  const parts = [at.file];
  if (at.line !== undefined) parts.push(at.column !== undefined ? `line ${at.line}, column ${at.column}` : `line ${at.line}`);
  if (at.byteOffset !== undefined) parts.push(`byte ${at.byteOffset}`);
  if (at.row !== undefined) parts.push(at.rowGroup !== undefined ? `row ${at.row} (row group ${at.rowGroup})` : `row ${at.row}`);
  else if (at.rowGroup !== undefined) parts.push(`row group ${at.rowGroup}`);
  if (at.field !== undefined) parts.push(`column ${JSON.stringify(at.field)}`);
  if (at.conversationIndex !== undefined) {
    const id = at.conversationId !== undefined ? ` (id ${JSON.stringify(at.conversationId)})` : '';
    parts.push(`conversation ${at.conversationIndex}${id}`);
  }
  if (at.messageIndex !== undefined) parts.push(`message ${at.messageIndex}`);
  return parts.join(', ');
}
