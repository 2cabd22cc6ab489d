import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';

/**
 * Why a file cannot be one of chatload's inputs, or undefined when it can. Inputs are read more than once (a first
 * look at their format, then the whole) and their size decides how, so only regular files will do: a pipe (`-i
 * <(cat f)`) cannot be read twice, a FIFO with no writer would block its open() until one comes (and the process
 * with it), and a device may never end. stat() itself never blocks on any of them.
 */
export function notRegularFile(info: Stats): string | undefined {
  if (info.isFile()) return undefined;
  if (info.isDirectory()) return 'expected a file, got a directory';
  const kind = info.isFIFO() ? 'a pipe or FIFO (as `<(...)` gives)' : info.isSocket() ? 'a socket' : 'a device';
  return `expected a regular file, got ${kind}: save it to a file first`;
}

/**
 * stat() of an input, throwing `fail(why)` when it is missing, unreadable or not a regular file; `why` is a whole
 * phrase for after the file's name ("cannot read the file: no such file", "expected a regular file, got …").
 */
export async function statInputFile(file: string, fail: (why: string, cause?: unknown) => Error): Promise<Stats> {
  let info: Stats;
  try {
    info = await stat(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw fail(`cannot read the file: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message}`, error);
  }
  const why = notRegularFile(info);
  if (why !== undefined) throw fail(why);
  return info;
}
