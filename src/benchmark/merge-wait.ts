import { join, resolve } from 'node:path';
import { sleep } from '../load/sleep.js';
import { ChatloadError, ConfigError, ExitCode } from '../errors/index.js';
import { folderGlob, hasWildcard } from '../store/folder-glob.js';
import { readResultsFile } from '../store/results-reader.js';
import { RESULTS_FILE } from '../store/run-data.js';
import { describeRunFolderState, isComplete, runFolderState } from '../store/run-folder-state.js';
import { counted } from '../util/plural.js';

/** Between two looks at the shard folders: a few stat() calls each, so a second costs nothing on any file system. */
export const SHARD_POLL_MS = 1000;

/** How `merge --expect N --wait D` waits. */
export interface ShardWaitOptions {
  /** The folders given to merge: paths, or patterns with wildcards (`results/shard-*`), expanded anew at each look. */
  args: readonly string[];
  /** The shard folders to wait for (--expect). */
  expect: number;
  /** The longest wait, in ms (--wait); 0 looks once. */
  waitMs: number;
  /** The merge's output folder: never taken for a shard, even when a pattern matches it. */
  exclude?: string;
  /** Ends the wait early (SIGINT, SIGTERM): the wait then throws with exit code 130. */
  signal?: AbortSignal;
  /** @default SHARD_POLL_MS */
  pollMs?: number;
  /** Called with what is missing whenever it changes (the CLI prints it on stderr). */
  onWaiting?: (missing: string) => void;
}

/** One look at the shard folders. */
export interface ShardLook {
  /** Every folder found or named, in the order given (patterns' matches sorted by name). */
  folders: string[];
  /** The folders whose run ended (results.json, or a crashed run's requests.jsonl): nothing more will come. */
  complete: string[];
  /** What is missing, on one line ('' when nothing is). */
  missing: string;
  /** The arguments read as patterns (with a wildcard, and not a folder themselves). */
  patterns: string[];
}

/**
 * The folders named by `args` right now: a path as given (there or not), a pattern's matching folders (a path with a
 * wildcard that is itself a folder is taken as it is). `patterns`: the args read as patterns.
 */
export function shardFolders(args: readonly string[], exclude: string | undefined): { folders: string[]; patterns: string[] } {
  const skip = exclude === undefined ? undefined : resolve(exclude);
  const folders: string[] = [];
  const patterns: string[] = [];
  const add = (path: string): void => {
    const full = resolve(path);
    if (full !== skip && !folders.includes(full)) folders.push(full);
  };
  for (const arg of args) {
    if (hasWildcard(arg) && runFolderState(arg).kind === 'absent') {
      patterns.push(arg);
      for (const path of folderGlob(arg)) add(path);
    } else add(arg);
  }
  return { folders, patterns };
}

/** Looks once at the shard folders `args` names: which are complete, and what is missing of `expect`. */
export function lookAtShards(args: readonly string[], expect: number, exclude?: string): ShardLook {
  const { folders, patterns } = shardFolders(args, exclude);
  const complete: string[] = [];
  const parts: string[] = [];
  for (const dir of folders) {
    const state = runFolderState(dir);
    if (isComplete(state)) complete.push(dir);
    else parts.push(`${dir}: ${describeRunFolderState(state)}`);
  }
  if (folders.length < expect) {
    const where = patterns.length === 0 ? '' : ` (matching ${patterns.join(', ')})`;
    parts.push(`${counted(expect - folders.length, 'more folder')} not there yet${where}`);
  }
  return { folders, complete, missing: parts.join('; '), patterns };
}

/**
 * Waits until `expect` shard folders are complete (lookAtShards), looking every `pollMs`, and returns them. Throws a
 * ConfigError (exit 2) when more folders than expected are found (an earlier run's folder in the pattern's way: more
 * never becomes fewer), a ChatloadError (exit 1) naming what is missing when the wait ends first, and one with exit
 * 130 when `signal` ends it. The wait is bounded by `waitMs` and answers the signal at once (load/sleep.ts).
 */
export async function waitForShards(options: ShardWaitOptions): Promise<string[]> {
  const { args, expect, waitMs, exclude, signal, onWaiting } = options;
  const pollMs = options.pollMs ?? SHARD_POLL_MS;
  const deadline = performance.now() + waitMs;
  let said = '';
  for (;;) {
    const look = lookAtShards(args, expect, exclude);
    if (look.patterns.length === 0 && look.folders.length < expect) {
      throw new ConfigError(`merge --expect ${expect}: names ${counted(look.folders.length, 'folder')} and no pattern, so ${expect} can never be found; name them all, or give a pattern in quotes ('results/shard-*')`);
    }
    if (look.folders.length > expect) {
      throw new ConfigError(`merge --expect ${expect}: found ${look.folders.length} folders (${look.folders.join(', ')}); name the shard folders of this run, or move an earlier run's away`);
    }
    if (look.missing === '') return look.folders;
    if (look.missing !== said) onWaiting?.((said = look.missing));
    const left = deadline - performance.now();
    const stopped = signal?.aborted === true || left <= 0 || !(await sleep(Math.min(pollMs, left), signal ?? new AbortController().signal));
    if (!stopped) continue;
    const interrupted = signal?.aborted === true;
    const finished = missingShards(look.complete, expect);
    const message = `merge --expect ${expect}: ${interrupted ? 'interrupted while waiting' : `the wait (${formatWait(waitMs)}) ended`} with ${look.complete.length} of ${expect} shard folders complete; missing: ${look.missing}${finished}`;
    throw new ChatloadError(message, interrupted ? { exitCode: ExitCode.interrupted } : {});
  }
}

/**
 * The shard indices (`--shard I/N`) no complete folder has, when every finished one says its shard and N is `expect`:
 * "; shards not finished: 1/4, 3/4". '' otherwise.
 */
function missingShards(complete: readonly string[], expect: number): string {
  const seen = new Set<number>();
  for (const dir of complete) {
    let shard: unknown;
    try {
      shard = readResultsFile(join(dir, RESULTS_FILE)).shard;
    } catch {
      return ''; // a crashed shard (no results.json) does not say its index
    }
    const match = typeof shard === 'string' ? /^(\d+)\/(\d+)$/.exec(shard) : null;
    if (match === null || Number(match[2]) !== expect) return '';
    seen.add(Number(match[1]));
  }
  const missing = Array.from({ length: expect }, (_, i) => i).filter((i) => !seen.has(i));
  return seen.size === 0 || missing.length === 0 ? '' : `; shards not finished: ${missing.map((i) => `${i}/${expect}`).join(', ')}`;
}

/** A wait in ms as the flag reads: "90 s", "2.5 h". */
export function formatWait(ms: number): string {
  const s = ms / 1000;
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Number((s / 60).toFixed(2))} min`;
  return `${Number((s / 3600).toFixed(2))} h`;
}
