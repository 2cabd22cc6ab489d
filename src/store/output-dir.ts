import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { ConfigError } from '../errors/index.js';

/** `./chatload-results/<UTC timestamp>/`, e.g. chatload-results/2026-11-30T09-33-26Z. */
export function defaultOutputDir(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  return join('chatload-results', stamp);
}

/** Bytes the probe writes (and fsyncs) to prove the folder takes data: 16 KiB. */
export const PROBE_BYTES = 16 * 1024;

/** "EACCES: permission denied": a file-system error's code and its cause, without the path Node appends. */
export function describeFsError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (typeof e?.code !== 'string') return error instanceof Error ? error.message : String(error);
  // Node's message is "EACCES: permission denied, open '/x/y'": keep the code and the cause, drop the call and path.
  const cause = /^[A-Z0-9_]+: ([^,]+)/.exec(e.message ?? '')?.[1];
  return cause === undefined ? e.code : `${e.code}: ${cause}`;
}

/**
 * Creates the output folder (and its parents) and proves it takes data before anything is sent (issue #16): a
 * temporary file in it is created, given PROBE_BYTES, fsynced and removed. Returns the folder as given; a one-line
 * ConfigError (exit 2) naming the real cause (EACCES, EROFS, ENOSPC, ENOTDIR, …) when it cannot. `write` is
 * writeSync; a test gives a failing one.
 */
export function prepareOutputDir(dir: string, write: typeof writeSync = writeSync, label = `--output-dir ${dir}`): string {
  const fail = (error: unknown): never => {
    throw new ConfigError(`${label}: cannot write there (${describeFsError(error)})`, { cause: error });
  };
  try {
    mkdirSync(resolve(dir), { recursive: true });
  } catch (error) {
    fail(realMkdirError(resolve(dir), error));
  }
  const probe = join(resolve(dir), `.chatload-probe-${process.pid}-${Date.now()}`);
  let fd: number | undefined;
  try {
    fd = openSync(probe, 'wx');
    const data = Buffer.alloc(PROBE_BYTES, 0x20);
    for (let offset = 0; offset < data.length; ) offset += write(fd, data, offset, data.length - offset);
    fsyncSync(fd);
  } catch (error) {
    fail(error);
  } finally {
    if (fd !== undefined) closeSync(fd);
    rmSync(probe, { force: true });
  }
  return dir;
}

/**
 * One of several runs' file named after the file given: `_<suffix>` before its extension
 * (`out/benchmark_report.yaml` → `out/benchmark_report_0.yaml`), as llm-d-benchmark's converter names a results file's
 * stages (--llmd-report of a sweep's points and --repeat's repetitions).
 */
export function indexedFile(file: string, suffix: string): string {
  const ext = extname(file);
  return `${file.slice(0, file.length - ext.length)}_${suffix}${ext}`;
}

/**
 * Proves before anything is sent that a file a run writes after it (`-o`, `--stats-json-output`, `--csv FILE`,
 * `-e FILE`) can be written (issue #35: they ended whole runs with "internal error: EISDIR/EROFS"): not a folder, and
 * its folder created and taking data (as prepareOutputDir). One line naming the flag, exit 2.
 */
export function prepareOutputFile(flag: string, file: string): void {
  let isFolder = false;
  try {
    isFolder = statSync(file).isDirectory();
  } catch {
    // Not there yet: written later.
  }
  if (isFolder) throw new ConfigError(`${flag} ${file}: is a folder; expected a file to write`);
  const folder = dirname(resolve(file));
  prepareOutputDir(folder, writeSync, `${flag} ${file}: its folder ${folder}`);
}

/**
 * A recursive mkdir can report ENOENT when the real cause is a parent it may not write (EACCES, EROFS): redo the
 * first missing level alone, under the deepest folder that exists, to learn the real cause.
 */
function realMkdirError(path: string, error: unknown): unknown {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return error;
  let missing = path;
  while (!existsSync(dirname(missing)) && dirname(missing) !== missing) missing = dirname(missing);
  try {
    mkdirSync(missing);
    rmSync(missing, { recursive: true, force: true });
  } catch (real) {
    return real;
  }
  return error;
}

/** The files of one run in its output folder, any of which `--overwrite` removes; the first two mark a run. */
export const RUN_FILES = ['requests.jsonl', 'results.json', 'report.html', 'report.xlsx', 'requests.csv'] as const;

/**
 * One run per folder (issue #16): a folder that holds a previous run (requests.jsonl or results.json) is refused
 * with a one-line ConfigError (exit 2), since appending would mix two runs; with `overwrite`, that run's files
 * (RUN_FILES) are removed first; with `resume` (--resume), all but requests.jsonl, which the run continues. Other
 * files in the folder (a dataset, conversations.json) are left alone.
 */
export function claimOutputDir(dir: string, overwrite: boolean, resume = false): void {
  const previous = RUN_FILES.slice(0, 2).filter((name) => existsSync(join(dir, name)));
  if (previous.length === 0) return;
  if (!overwrite && !resume) {
    throw new ConfigError(`--output-dir ${dir}: holds a previous run (${previous.join(', ')}); pass --overwrite to replace it, or choose another folder`);
  }
  // --resume keeps requests.jsonl (the run goes on appending to it); the summaries and reports are written anew.
  for (const name of resume ? RUN_FILES.slice(1) : RUN_FILES) {
    try {
      rmSync(join(dir, name), { force: true });
    } catch (error) {
      throw new ConfigError(`--output-dir ${dir}: cannot remove the previous run's ${name} (${describeFsError(error)})`, { cause: error });
    }
  }
}
