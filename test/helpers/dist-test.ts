// The test suite compiled to JavaScript, for `npm test` (issue 17, part 5): every src/ and test/ .ts file
// transformed by esbuild, one output per input (no bundling), into dist-test/ with the same layout, so each relative
// import (`../../src/x.js`) finds its compiled module and workers start from the compiled `.js`
// (util/module-worker.ts picks the caller's extension). `node --test` then runs plain JavaScript: no tsx loader in
// each test file's process (~0.3 s of CPU each) nor in each simulator or engine worker thread (~1.2 s each).
//
// - Types are not checked here (as under tsx): `npm run typecheck` does that.
// - Only what changed is transformed again: a source newer than its output, or every file when the options below
//   change. Outputs whose source is gone are removed, so a deleted test does not keep running.
// - Source maps (.js.map beside each output, pointing at the .ts) make `node --enable-source-maps` report
//   failures at the .ts lines.
// - Tests find the repository's files through REPO_ROOT (helpers/repo.ts), never relative to their compiled copy;
//   files that are not TypeScript (fixtures, cli-batch-child.mjs) are not copied.
// - Writes go through a temporary file and a rename, so two `npm test` of the same tree starting together never
//   read a half-written module.
import { buildSync, version } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from './repo.js';

/** The compiled tree: dist-test/src/**, dist-test/test/** (git-ignored, not linted, not packed). */
export const DIST_TEST = join(REPO_ROOT, 'dist-test');
/** The folders compiled: the tests and the sources and tools they import. */
const FOLDERS = ['src', 'test', 'tools'];
/** What the outputs depend on besides their own source: a change here rebuilds everything. */
const OPTIONS = { esbuild: version, format: 'esm', platform: 'node', target: 'node20', sourcemap: 'linked', sourcesContent: false } as const;
const stampFile = join(DIST_TEST, '.options.json');

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

/** Every .ts file (not .d.ts) under `dir`, relative to the root. */
function sources(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

/** dist-test/<path>.js for <path>.ts. */
function outputOf(source: string): string {
  return join(DIST_TEST, source.replace(/\.ts$/, '.js'));
}

function writeAtomic(path: string, contents: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

/** Removes outputs (and their maps) whose .ts source no longer exists. */
function removeOrphans(wanted: Set<string>): number {
  let removed = 0;
  for (const folder of FOLDERS) {
    let files: string[];
    try {
      files = readdirSync(join(DIST_TEST, folder), { recursive: true, encoding: 'utf8' });
    } catch {
      continue;
    }
    for (const file of files) {
      const path = join(DIST_TEST, folder, file);
      const js = path.replace(/\.js\.map$/, '.js');
      if ((file.endsWith('.js') || file.endsWith('.js.map')) && !wanted.has(js)) {
        rmSync(path, { force: true });
        removed++;
      }
    }
  }
  return removed;
}

/** Brings dist-test/ up to date with src/ and test/; returns how many files it transformed. Throws on a syntax error. */
export function ensureDistTest(): { compiled: number; removed: number; total: number } {
  const startedAt = new Date();
  const all = FOLDERS.flatMap(sources);
  const stamp = JSON.stringify(OPTIONS);
  let same = false;
  try {
    same = readFileSync(stampFile, 'utf8') === stamp;
  } catch {
    // first build
  }
  const stale = same ? all.filter((source) => mtimeMs(outputOf(source)) < mtimeMs(join(REPO_ROOT, source))) : all;
  if (stale.length > 0) {
    const { outputFiles } = buildSync({
      absWorkingDir: REPO_ROOT,
      entryPoints: stale,
      outbase: '.',
      outdir: DIST_TEST,
      bundle: false,
      write: false,
      logLevel: 'silent',
      format: OPTIONS.format,
      platform: OPTIONS.platform,
      target: OPTIONS.target,
      sourcemap: OPTIONS.sourcemap,
      sourcesContent: OPTIONS.sourcesContent,
    });
    for (const file of outputFiles) {
      writeAtomic(file.path, file.contents);
      // A source saved during this build is newer than its output, so the next call transforms it again.
      utimesSync(file.path, startedAt, startedAt);
    }
    writeAtomic(stampFile, Buffer.from(stamp));
  }
  const removed = removeOrphans(new Set(all.map(outputOf)));
  return { compiled: stale.length, removed, total: all.length };
}

