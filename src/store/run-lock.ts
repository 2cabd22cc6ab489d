import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../errors/index.js';
import { claimOutputDir, describeFsError, prepareOutputDir, RUN_FILES } from './output-dir.js';

/** The file that says a run is using its output folder: created atomically, removed when the run ends. */
export const LOCK_FILE = 'chatload.lock';

/** Who holds a folder's lock, as its lock file says. */
export interface LockOwner {
  pid: number;
  host: string;
  started: string;
}

/** The run that holds a folder's lock. */
export class FolderInUse extends ConfigError {}

function readOwner(file: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? { pid: owner.pid, host: owner.host, started: String(owner.started) } : undefined;
  } catch {
    return undefined;
  }
}

/** True when the lock's owner is a process of this machine that no longer runs (a crashed or killed run). */
function isStale(owner: LockOwner | undefined): boolean {
  if (owner === undefined || owner.host !== hostname()) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * `dir`'s lock as it stands: undefined when there is none; else its owner (undefined when the file cannot be read, e.g.
 * half written) and whether it is stale (its owner a dead process of this machine; one of another machine cannot be
 * checked, so it is never stale).
 */
export function readLock(dir: string): { owner: LockOwner | undefined; stale: boolean } | undefined {
  const lock = join(dir, LOCK_FILE);
  if (!existsSync(lock)) return undefined;
  const owner = readOwner(lock);
  return { owner, stale: isStale(owner) };
}

/**
 * Claims `dir` for this run (issue #35: two runs started at once into one folder mixed their records): the lock
 * file, with this process's pid, host and start, appears whole or not at all (written aside, then hard-linked into
 * place, which fails if it exists). A lock whose owner is a dead process of this machine is stale and replaced; a
 * live one (or one of another machine, which cannot be checked) is a FolderInUse error. Returns the release.
 */
export function lockOutputDir(dir: string, label = `--output-dir ${dir}`): () => void {
  const lock = join(dir, LOCK_FILE);
  const aside = join(dir, `.${LOCK_FILE}.${process.pid}`);
  const owner: LockOwner = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  try {
    writeFileSync(aside, `${JSON.stringify(owner)}\n`);
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(aside, lock);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = readOwner(lock);
        if (attempt === 0 && isStale(holder)) {
          unlinkSync(lock);
          continue;
        }
        const who = holder === undefined ? 'another chatload run' : `another chatload run (pid ${holder.pid} on ${holder.host}, started ${holder.started})`;
        throw new FolderInUse(`${label}: ${who} is using it; choose another folder, or remove ${lock} if that run is gone`);
      }
    }
  } catch (error) {
    if (error instanceof FolderInUse) throw error;
    throw new ConfigError(`${label}: cannot lock it (${describeFsError(error)})`, { cause: error });
  } finally {
    try {
      unlinkSync(aside);
    } catch {
      // Already gone.
    }
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      if (readOwner(lock)?.pid === process.pid) unlinkSync(lock);
    } catch {
      // A lock already removed (by hand) is no harm.
    }
  };
}

/**
 * The run's output folder, made (prepareOutputDir), locked and claimed (claimOutputDir). `given` is --output-dir;
 * without it the folder is `fallback` (named by the second), and one that another run holds or has used gets a
 * suffix (`-2`, `-3`, …) rather than mixing two runs started in the same second. Returns the folder and the release.
 */
export function claimRunFolder(given: string | undefined, fallback: string, overwrite: boolean, resume: boolean): { outputDir: string; release: () => void } {
  for (let n = 1; ; n++) {
    const outputDir = prepareOutputDir(given ?? (n === 1 ? fallback : `${fallback}-${n}`));
    const retry = given === undefined && n < 1000;
    let release: () => void;
    try {
      release = lockOutputDir(outputDir);
    } catch (error) {
      if (retry && error instanceof FolderInUse) continue;
      throw error;
    }
    if (retry && RUN_FILES.slice(0, 2).some((name) => existsSync(join(outputDir, name)))) {
      release();
      continue;
    }
    try {
      claimOutputDir(outputDir, overwrite, resume);
    } catch (error) {
      release();
      throw error;
    }
    return { outputDir, release };
  }
}
