import { constants, type Stats } from 'node:fs';
import { access, open } from 'node:fs/promises';
import { DatasetError } from '../errors/index.js';
import { statInputFile } from '../util/input-file.js';

// A dataset file before it is read: readable, and the first bytes that tell its kind.

/** Fails with a one-line DatasetError unless `file` is a readable regular file. */
export async function checkReadable(file: string): Promise<Stats> {
  const info = await statInputFile(file, (why) => new DatasetError({ file }, why));
  try {
    await access(file, constants.R_OK);
  } catch (error) {
    throw new DatasetError({ file }, `cannot read the file: ${(error as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : (error as Error).message}`);
  }
  return info;
}

/** The first non-whitespace character of the file, or '' when it is blank. */
export async function firstChar(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    for (let position = 0; ; ) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) return '';
      const text = buffer.toString('utf8', 0, bytesRead).replace(/^\uFEFF/, '');
      const match = /\S/.exec(text);
      if (match) return match[0];
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

/** The file's first line (at most its first 4 KB). */
export async function firstLine(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.toString('utf8', 0, bytesRead).split(/\r?\n|\r/)[0] ?? '';
  } finally {
    await handle.close();
  }
}
