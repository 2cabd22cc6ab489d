import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readLock } from './run-lock.js';
import { REQUESTS_FILE, RESULTS_FILE } from './run-data.js';

/**
 * Where a run's output folder stands, read from its files (no file is opened but the lock's few bytes):
 * - `finished`: results.json is there (written atomically once requests.jsonl is closed);
 * - `ended`: requests.jsonl but no results.json, and no live lock: a run that crashed (its lock released on the way
 *   out, or left by a dead process of this machine). That is its final state: `merge` takes its records as they are;
 * - `running`: a lock is held (by a live process, or by one of another machine, which cannot be checked);
 * - `empty`: the folder holds no records and no live lock: not started yet, or a run that ended before its first record;
 * - `absent`: no such folder.
 * `finished` and `ended` are complete: nothing more will come.
 */
export type RunFolderState =
  | { kind: 'finished' }
  | { kind: 'ended'; staleLock: boolean }
  | { kind: 'running'; holder: string }
  | { kind: 'empty'; staleLock: boolean }
  | { kind: 'absent' };

/** The state of the run folder `dir` (see RunFolderState). */
export function runFolderState(dir: string): RunFolderState {
  if (!isFolder(dir)) return { kind: 'absent' };
  if (existsSync(join(dir, RESULTS_FILE))) return { kind: 'finished' };
  const lock = readLock(dir);
  if (lock !== undefined && !lock.stale) {
    const { owner } = lock;
    return { kind: 'running', holder: owner === undefined ? 'a chatload run' : `pid ${owner.pid} on ${owner.host}, started ${owner.started}` };
  }
  const staleLock = lock !== undefined;
  return existsSync(join(dir, REQUESTS_FILE)) ? { kind: 'ended', staleLock } : { kind: 'empty', staleLock };
}

/** True for the states after which a run writes nothing more to its folder. */
export function isComplete(state: RunFolderState): boolean {
  return state.kind === 'finished' || state.kind === 'ended';
}

/** The state in a few words, for a line that names a folder: "running (pid 12 on host-a, started …)". */
export function describeRunFolderState(state: RunFolderState): string {
  switch (state.kind) {
    case 'finished':
      return 'finished (results.json)';
    case 'ended':
      return `ended without results.json (a crashed run${state.staleLock ? ', its lock left by a dead process' : ''}): its records merge as they are`;
    case 'running':
      return `running (lock held by ${state.holder})`;
    case 'empty':
      return state.staleLock ? 'its run died before writing a record (a dead process\'s lock, no requests.jsonl)' : 'no records yet (not started)';
    case 'absent':
      return 'not there yet';
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
