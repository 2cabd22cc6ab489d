// Where the repository's own files are, for tests run from either place: the TypeScript sources under tsx
// (`node --import tsx/esm --test test/x/y.test.ts`) or their compiled copy under dist-test/ (`npm test`,
// test/helpers/dist-test.ts). A test must find fixtures, docs and sources in the repository, never beside its
// compiled copy, so paths start from REPO_ROOT instead of `new URL('../..', import.meta.url)`.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder above this file holding a package.json: the repository (dist-test/ has none). */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

/** The repository's root folder (holds package.json, src/, test/, docs/). */
export const REPO_ROOT = findRoot();

/** An absolute path inside the repository, e.g. repoPath('test', 'fixtures', 'corpus-voyage.txt'). */
export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}
