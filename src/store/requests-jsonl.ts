import { closeSync, createReadStream, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { DatasetError } from '../errors/index.js';
import type { RequestRecord } from '../metrics/record.js';

/**
 * Appends one JSON line per RequestRecord to requests.jsonl as each request ends. Crash-safe by construction: every line
 * is handed to the kernel with one synchronous write(2) on an fd opened for append, so once write() returns the line is
 * in the page cache and survives the process being killed (even kill -9); nothing sits in a user-space buffer. (A power
 * loss can still lose recent lines: fsync per line would cost a disk flush per request, so only close() fsyncs.)
 */
export class RequestsJsonlSink {
  #fd: number | null;
  #count = 0;
  readonly #write: typeof writeSync;
  /** A failed write may have left part of a line: the next record starts on a fresh line. */
  #torn = false;

  private constructor(fd: number, write: typeof writeSync) {
    this.#fd = fd;
    this.#write = write;
  }

  /**
   * Opens (creating it and its directory if needed) `path` for append. `write` is writeSync; a test gives a failing
   * one to stand in for a full disk.
   */
  static open(path: string, write: typeof writeSync = writeSync): RequestsJsonlSink {
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(path, 'a');
    // A file left by a crash may end in a torn line (issue #35): a whole record that lost only its newline gets it; a
    // fragment is cut off, so that no invalid line is left between the records before it and the ones appended now.
    const size = fstatSync(fd).size;
    if (size > 0) {
      const tail = tailAfterLastNewline(path, size);
      if (tail.bytes.length > 0) {
        if (isWholeRecord(tail.bytes)) writeAll(fd, Buffer.from('\n'));
        else ftruncateSync(fd, tail.start);
      }
    }
    return new RequestsJsonlSink(fd, write);
  }

  /** Records written by this sink. */
  get count(): number {
    return this.#count;
  }

  /**
   * Appends one record as one line. Throws the file system's error when the write fails (ENOSPC, EIO, …); a torn
   * part it may leave is ended before the next record, so each record stays on its own line. Throws after close().
   */
  write(record: RequestRecord): void {
    if (this.#fd === null) throw new Error('RequestsJsonlSink.write() after close()');
    const line = Buffer.from(`${this.#torn ? '\n' : ''}${JSON.stringify(record)}\n`, 'utf8');
    this.#torn = true;
    writeAll(this.#fd, line, this.#write);
    this.#torn = false;
    this.#count++;
  }

  /** Flushes to disk (fsync) and closes. Safe to call twice. */
  close(): void {
    if (this.#fd === null) return;
    const fd = this.#fd;
    this.#fd = null;
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

/** One line in one write where the OS allows; loops on a short write (possible on a full disk or a pipe). */
function writeAll(fd: number, data: Buffer, write: typeof writeSync = writeSync): void {
  let offset = 0;
  while (offset < data.length) offset += write(fd, data, offset, data.length - offset);
}

/** The bytes after the last newline of `path` (`size` bytes long) and where they start, read backwards in chunks. */
function tailAfterLastNewline(path: string, size: number): { start: number; bytes: Buffer } {
  const readFd = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(64 * 1024);
    for (let end = size; end > 0; ) {
      const from = Math.max(0, end - chunk.length);
      const n = readSync(readFd, chunk, 0, end - from, from);
      const at = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (at >= 0) {
        const start = from + at + 1;
        return { start, bytes: readBytes(readFd, start, size - start) };
      }
      end = from;
    }
    return { start: 0, bytes: readBytes(readFd, 0, size) };
  } finally {
    closeSync(readFd);
  }
}

function readBytes(fd: number, from: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let read = 0; read < length; ) read += readSync(fd, out, read, length - read, from + read);
  return out;
}

/** Whether a line's bytes are one whole record (a JSON object). */
function isWholeRecord(bytes: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * Reads a requests.jsonl file. A torn line (the process died mid-write: the last line, or a line followed by records a
 * reopened sink appended) is skipped. Any other invalid line throws a DatasetError naming the line.
 */
export function readRequestsJsonl(path: string): RequestRecord[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const records: RequestRecord[] = [];
  for (let i = 0; i < lines.length; i++) {
    const record = parseLine(lines[i]!, i === lines.length - 1, path, i + 1);
    if (record !== null) records.push(record);
  }
  return records;
}

/**
 * Streams a requests.jsonl one record at a time, in memory bounded by the longest line, with readRequestsJsonl()'s
 * rules (torn lines skipped, any other invalid line a DatasetError naming it). Resolves with the records read.
 */
export async function streamRequestsJsonl(path: string, onRecord: (record: RequestRecord) => void): Promise<number> {
  const decoder = new StringDecoder('utf8');
  let partial = '';
  let lineNumber = 0;
  let count = 0;
  const take = (line: string, isLast: boolean): void => {
    const record = parseLine(line, isLast, path, ++lineNumber);
    if (record === null) return;
    count++;
    onRecord(record);
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    const text = partial + decoder.write(chunk);
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      take(text.slice(start, end), false);
      start = end + 1;
    }
    partial = text.slice(start);
  }
  // What follows the last newline is the last "line" of split('\n'): empty after a complete file, else torn.
  take(partial + decoder.end(), true);
  return count;
}

/**
 * Lines of a file (a last line without its newline counts), counted in 1 MiB chunks without parsing: an upper bound
 * on its records (blank and torn lines count too), cheap enough to choose between loading and streaming them.
 */
export async function countJsonlLines(path: string): Promise<number> {
  let lines = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  return last === 0x0a ? lines : lines + 1;
}

/** One line of requests.jsonl: its record, or null for a blank or torn line; any other invalid line throws. */
function parseLine(line: string, isLast: boolean, path: string, lineNumber: number): RequestRecord | null {
  if (line.trim() === '') return null;
  try {
    return JSON.parse(line) as RequestRecord;
  } catch (error) {
    if (isTorn(line, isLast)) return null;
    throw new DatasetError({ file: path, line: lineNumber }, 'not a valid JSON record', { cause: error });
  }
}

/** The last line without its newline, or a record cut short: it starts as one ('{') but does not end as one ('}'). */
function isTorn(line: string, isLast: boolean): boolean {
  if (isLast) return true;
  const text = line.trim();
  return text.startsWith('{') && !text.endsWith('}');
}
