// The compiled CLI (dist/) for tests and benches that start chatload processes. Through tsx a chatload process costs
// ~1 s of CPU to start here, compiled ~0.4 s (issue 17, part 5), so CLI tests run the compiled CLI: the esbuild
// bundle the package ships, `node dist/bundle/chatload.js` (tools/bundle.mjs, after tsc).
//
// A stale dist would test old code, so ensureDist() rebuilds whenever any source is newer than the last build.
// `npm test` calls it once before the files start (pretest), so under `npm test` every file finds dist fresh and no
// build races another; a file run alone (`node --import tsx/esm --test test/x.test.ts`) gets it built on first use.
// Run as a script (pretest) it also compiles the tests themselves into dist-test/ (dist-test.ts), which `npm test` runs.
// Concurrent callers (several files run directly with a stale dist) take turns through a lock directory.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './repo.js';

const root = REPO_ROOT;
const dist = join(root, 'dist');
/** tsc's incremental state (tsconfig.build.json); ensureDist() sets its mtime to the start of the last build that emitted. */
const buildInfo = join(dist, '.tsbuildinfo');
const lock = join(dist, '.build-lock');
/** A lock older than this was left by a build that died: taken over. */
const STALE_LOCK_MS = 120_000;

/** `node dist/bundle/chatload.js` is the `chatload` command (bin/chatload.js imports it): esbuild's bundle of src/cli/entry.ts. */
export const DIST_CLI = join(dist, 'bundle', 'chatload.js');
/** tsc's unbundled output of the same entry (bench/startup.ts compares the two). */
export const DIST_CLI_UNBUNDLED = join(dist, 'cli', 'entry.js');

/** Absolute path of a compiled module, e.g. distModule('report/requests-jsonl.js'). */
export function distModule(relative: string): string {
  return join(dist, relative);
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

/** The newest mtime of the build's inputs: every file under src/, the two tsconfig files and the bundler. */
function newestSourceMs(dir = join(root, 'src')): number {
  let newest = Math.max(mtimeMs(join(root, 'tsconfig.json')), mtimeMs(join(root, 'tsconfig.build.json')), mtimeMs(join(root, 'tools', 'bundle.mjs')));
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMs(path) : mtimeMs(path));
  }
  return newest;
}

function isFresh(): boolean {
  // tsc --incremental does not re-emit an output deleted by hand (its state says it is current), so check the entry.
  return mtimeMs(DIST_CLI_UNBUNDLED) >= 0 && mtimeMs(DIST_CLI) >= 0 && mtimeMs(buildInfo) >= newestSourceMs();
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Holds the lock while `fn` runs; waits (bounded) while another process holds it. */
function withLock(fn: () => void): void {
  mkdirSync(dist, { recursive: true });
  const deadline = Date.now() + 2 * STALE_LOCK_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() - mtimeMs(lock) > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`dist/ is locked by another build (${lock}); remove it if no build runs`);
      else sleepSync(200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds dist/ (tsc, incremental) unless it is newer than every source. Throws with tsc's output when it emitted nothing. */
export function ensureDist(): void {
  if (isFresh()) return;
  withLock(() => {
    if (isFresh()) return; // another process built it while this one waited
    if (mtimeMs(DIST_CLI_UNBUNDLED) < 0) rmSync(buildInfo, { force: true });
    const startedAt = new Date();
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    try {
      execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'pipe', timeout: 180_000 });
    } catch (error) {
      const { status, stdout } = error as { status?: number | null; stdout?: Buffer };
      const out = stdout?.toString() ?? String(error);
      // Exit 2: type errors, but every output was emitted, so dist/ matches src/. Type errors are `npm run
      // typecheck`'s to fail on (the tests under tsx never checked types either); say so and test the code.
      if (status !== 2) throw new Error(`npm run build failed, so dist/ cannot be tested:\n${out}`, { cause: error });
      process.stderr.write(`dist/ was built with type errors (npm run typecheck fails):\n${out}`);
    }
    // Then the bundle the package ships (tools/bundle.mjs, the second half of `npm run build`).
    try {
      execFileSync(process.execPath, [join(root, 'tools', 'bundle.mjs')], { cwd: root, stdio: 'pipe', timeout: 120_000 });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
      throw new Error(`tools/bundle.mjs failed, so dist/bundle/ cannot be tested:\n${stdout?.toString() ?? ''}${stderr?.toString() ?? String(error)}`, { cause: error });
    }
    // A source saved during the build is newer than this, so the next call builds again.
    utimesSync(buildInfo, startedAt, startedAt);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureDist();
  // Imported here only: the test processes that import this file for DIST_CLI need not load esbuild.
  const { ensureDistTest } = await import('./dist-test.js');
  ensureDistTest();
}
