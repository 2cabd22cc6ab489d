import { ChatloadError, ExitCode } from './chatload-error.js';

/**
 * A run's output could not be written (ENOSPC, EIO, …): exit code 1, one line naming the file and the cause
 * (issue #16). `lostRecords` counts the requests the server completed that are not in requests.jsonl.
 */
export class OutputError extends ChatloadError {
  /** The file that could not be written. */
  readonly file: string;
  /** Requests that ended but whose records are not on disk; undefined when requests.jsonl was not the problem. */
  readonly lostRecords: number | undefined;

  /** `cause` is the file system's code and message (`ENOSPC: no space left on device`). */
  constructor(file: string, cause: string, lostRecords?: number, options: { cause?: unknown } = {}) {
    const lost = lostRecords === undefined ? '' : `: the run stopped (output_error); ${lostRecords} request records lost (lost_records)`;
    super(`cannot write ${file} (${cause})${lost}`, { ...options, exitCode: ExitCode.runFailed });
    this.name = 'OutputError';
    this.file = file;
    this.lostRecords = lostRecords;
  }
}
