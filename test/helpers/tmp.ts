import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary folder for one test's output files. */
export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `chatload-${label}-`));
}
