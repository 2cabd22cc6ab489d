import { ChatloadError, ExitCode } from './chatload-error.js';

/**
 * A run's output could not be written (ENOSPC, EIO, …): exit code 1, one line naming the file and the cause
 * (issue #16). `lostRecords` counts the requests the server completed that are not in requests.jsonl.
 */
export class OutputError extends ChatloadError {
  /** Adds that `file` could not be written either (`cause`), to the same one line. */
  alsoNot(file: string, cause: string): OutputError {
    return new OutputError(this.file, this.reason, this.lostRecords, { cause: this.cause, also: `${file} was not written either (${cause})` });
  }

  /** The file that could not be written. */
  readonly file: string;
  /** Why: the file system's code and message. */
  readonly reason: string;
  /** Requests that ended but whose records are not on disk; undefined when requests.jsonl was not the problem. */
  readonly lostRecords: number | undefined;

  /** `cause` is the file system's code and message (`ENOSPC: no space left on device`). */
  constructor(file: string, cause: string, lostRecords?: number, options: { cause?: unknown; also?: string } = {}) {
    const lost = lostRecords === undefined ? '' : `: the run stopped (output_error); ${lostRecords} request records lost (lost_records)`;
    // `also`: a second file that failed after it (results.json after requests.jsonl): said on the same line.
    const also = options.also === undefined ? '' : `; ${options.also}`;
    super(`cannot write ${file} (${cause})${lost}${also}`, { cause: options.cause, exitCode: ExitCode.runFailed });
    this.name = 'OutputError';
    this.file = file;
    this.reason = cause;
    this.lostRecords = lostRecords;
  }
}
