import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DatasetError } from '../errors/index.js';

/** How input text files are decoded. */
export interface Utf8ReadOptions {
  /**
   * Accept bytes that are not UTF-8, read as U+FFFD (with one warning per file naming the first one's byte offset).
   * Without it such a file is refused with a DatasetError naming the file and the byte offset. @default false
   */
  allowInvalidUtf8?: boolean;
  /** Receives the one-line warning of `allowInvalidUtf8`. */
  warn?: (message: string) => void;
}

const BOM = [0xef, 0xbb, 0xbf] as const;

/** Bytes in the UTF-8 sequence a lead byte starts (0 for a byte that cannot start one). */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * Offset of the first byte of `bytes` that does not start or continue a well-formed UTF-8 sequence (overlong forms,
 * surrogates and code points over U+10FFFF are ill-formed, as in the WHATWG decoder); -1 when all are well formed.
 * A sequence cut by the end of `bytes` counts as ill-formed at its lead byte.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    const length = sequenceLength(lead);
    if (length === 1) {
      i += 1;
      continue;
    }
    if (length === 0 || i + length > bytes.length) return i;
    const second = bytes[i + 1]!;
    // The second byte's range rules out overlongs (E0, F0), surrogates (ED) and code points past U+10FFFF (F4).
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    if (second < low || second > high) return i;
    for (let k = 2; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  return -1;
}

function invalidError(file: string, byteOffset: number, byte: number | undefined): DatasetError {
  const what = byte === undefined ? 'a UTF-8 sequence cut by the end of the file' : `byte 0x${byte.toString(16).padStart(2, '0')}`;
  return new DatasetError({ file, byteOffset }, `invalid UTF-8 (${what}); expected UTF-8 text: re-encode the file as UTF-8, or give --allow-invalid-utf8 to read such bytes as U+FFFD`);
}

/** Checks `bytes` (starting at `byteOffset` of `file`): throws, or warns once, on the first ill-formed byte. */
class Utf8Checker {
  readonly #file: string;
  readonly #options: Utf8ReadOptions;
  #warned = false;

  constructor(file: string, options: Utf8ReadOptions) {
    this.#file = file;
    this.#options = options;
  }

  check(bytes: Uint8Array, byteOffset: number, atEnd: boolean): void {
    if (this.#warned) return;
    const bad = firstInvalidUtf8(bytes);
    if (bad === -1) return;
    const byte = atEnd && sequenceLength(bytes[bad]!) > bytes.length - bad ? undefined : bytes[bad];
    if (this.#options.allowInvalidUtf8 !== true) throw invalidError(this.#file, byteOffset + bad, byte);
    this.#warned = true;
    this.#options.warn?.(`${this.#file}, byte ${byteOffset + bad}: invalid UTF-8, read as U+FFFD (--allow-invalid-utf8)`);
  }
}

function bomLength(bytes: Uint8Array): number {
  return bytes.length >= 3 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2] ? 3 : 0;
}

/**
 * Reads a whole text file as UTF-8: a leading byte order mark is dropped (issue #16: it made a valid file "invalid
 * JSON at line 1, column 1"), and a byte that is not UTF-8 is refused with its offset (see Utf8ReadOptions).
 * Read errors (ENOENT, ...) are the caller's to report.
 */
export async function readUtf8File(file: string, options: Utf8ReadOptions = {}): Promise<string> {
  const bytes = await readFile(file);
  const start = bomLength(bytes);
  const body = bytes.subarray(start);
  new Utf8Checker(file, options).check(body, start, true);
  return body.toString('utf8');
}

/** Where a chunk of input must be cut so that no UTF-8 sequence is split: after the last complete sequence. */
function completeEnd(bytes: Uint8Array): number {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = sequenceLength(byte);
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/**
 * Streams a text file as UTF-8 strings of about `chunkBytes` bytes each, never splitting a character, with the same
 * rules as {@link readUtf8File} (BOM dropped, invalid UTF-8 refused with its byte offset unless allowed).
 */
export async function* utf8Chunks(file: string, options: Utf8ReadOptions = {}, chunkBytes = 1 << 20): AsyncGenerator<string> {
  const checker = new Utf8Checker(file, options);
  let carry: Buffer = Buffer.alloc(0);
  /** File offset of carry[0]. */
  let offset = 0;
  let first = true;
  for await (const chunk of createReadStream(file, { highWaterMark: chunkBytes }) as AsyncIterable<Buffer>) {
    let bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    if (first) {
      // A read shorter than the BOM that may still be one waits for the next.
      if (bytes.length < 3 && bytes.every((byte, i) => byte === BOM[i])) {
        carry = bytes;
        continue;
      }
      first = false;
      const skip = bomLength(bytes);
      bytes = bytes.subarray(skip);
      offset += skip;
    }
    const end = completeEnd(bytes);
    const whole = bytes.subarray(0, end);
    checker.check(whole, offset, false);
    carry = Buffer.from(bytes.subarray(end));
    offset += end;
    if (whole.length > 0) yield whole.toString('utf8');
  }
  if (carry.length > 0) {
    checker.check(carry, offset, true);
    yield carry.toString('utf8');
  }
}

/**
 * Streams a text file's lines (without their terminator: LF, CRLF or a lone CR, as readline splits them), with the
 * rules of {@link utf8Chunks}. A line longer than `maxLineChars` UTF-16 code units is refused with a DatasetError
 * naming the file and line, so memory stays bounded.
 */
export async function* utf8Lines(file: string, options: Utf8ReadOptions & { maxLineChars: number }): AsyncGenerator<string> {
  let pending = '';
  let line = 1;
  /** The previous chunk ended with CR: an LF opening the next one belongs to it. */
  let skipLf = false;
  const check = (length: number): void => {
    if (length > options.maxLineChars) {
      throw new DatasetError({ file, line }, `the line is longer than ${options.maxLineChars.toLocaleString('en-US')} characters (the bound of one line)`);
    }
  };
  for await (let text of utf8Chunks(file, options)) {
    if (skipLf && text.startsWith('\n')) text = text.slice(1);
    skipLf = false;
    const terminators = /\r\n?|\n/g;
    let from = 0;
    for (let match = terminators.exec(text); match !== null; match = terminators.exec(text)) {
      check(pending.length + match.index - from);
      yield pending + text.slice(from, match.index);
      pending = '';
      line += 1;
      from = terminators.lastIndex;
      if (match[0] === '\r' && from === text.length) skipLf = true;
    }
    check(pending.length + text.length - from);
    pending += text.slice(from);
  }
  if (pending.length > 0) yield pending;
}
