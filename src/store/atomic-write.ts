import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * The temporary file beside `path` that an atomic write fills before renaming it over `path` (same directory: a
 * rename is atomic only within one file system). `suffix` keeps an extension some writers need (e.g. `.xlsx`).
 */
export function tempPathFor(path: string, suffix = ''): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp${suffix}`);
}

/**
 * Writes `text` so that readers see either the old file or the whole new one, never a partial file: a temporary
 * file in the same directory, fsync, then rename over `path`. Creates the directory if needed.
 */
export function writeTextAtomic(path: string, text: string): void {
  const file = TempFile.beside(path);
  try {
    file.write(text);
    file.commit();
  } catch (error) {
    file.abort();
    throw error;
  }
}

/**
 * As writeTextAtomic, for text too large to hold at once: `fill` writes it piece by piece (gathered into writes of
 * about 1 MiB); the file appears under `path` only when fill returns.
 */
export function writePiecesAtomic(path: string, fill: (write: (text: string) => void) => void): void {
  const file = TempFile.beside(path);
  try {
    fill((text) => file.write(text));
    file.commit();
  } catch (error) {
    file.abort();
    throw error;
  }
}

/** As writePiecesAtomic, for a producer that awaits between pieces (e.g. while streaming a file). */
export async function writeStreamAtomic(path: string, produce: (write: (text: string) => void) => Promise<void>): Promise<void> {
  const file = TempFile.beside(path);
  try {
    await produce((text) => file.write(text));
    file.commit();
  } catch (error) {
    file.abort();
    throw error;
  }
}

/** The temporary file of one atomic write: filled, then renamed over its target (commit) or removed (abort). */
class TempFile {
  readonly #path: string;
  readonly #tmp: string;
  #fd: number | null;
  /** Text not yet written: pieces are gathered into writes of about 1 MiB. */
  #pending = '';

  private constructor(path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.#path = path;
    this.#tmp = tempPathFor(path);
    this.#fd = openSync(this.#tmp, 'wx');
  }

  static beside(path: string): TempFile {
    return new TempFile(path);
  }

  write(text: string): void {
    if (this.#fd === null) throw new Error('atomic write: the file is already closed');
    this.#pending += text;
    if (this.#pending.length >= 1 << 20) this.#flush(this.#fd);
  }

  #flush(fd: number): void {
    const data = Buffer.from(this.#pending, 'utf8');
    this.#pending = '';
    // writeSync may write less than asked (a full disk, a pipe): loop until all of it is out.
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
  }

  commit(): void {
    if (this.#fd === null) throw new Error('atomic write: the file is already closed');
    this.#flush(this.#fd);
    // Without fsync a power loss after rename can leave an empty file under the final name.
    fsyncSync(this.#fd);
    closeSync(this.#fd);
    this.#fd = null;
    renameSync(this.#tmp, this.#path);
    syncDirectory(dirname(this.#path));
  }

  /** Closes and removes the temporary file (after a failure); the target is untouched. */
  abort(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
    try {
      unlinkSync(this.#tmp);
    } catch {
      // already gone (or renamed)
    }
  }
}

/** writeTextAtomic of pretty JSON (2-space indent, trailing newline). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeTextAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Best effort: makes the rename itself durable. Not every platform lets a directory be opened and fsynced. */
function syncDirectory(dir: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Windows and some file systems refuse; the file content is already durable.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
