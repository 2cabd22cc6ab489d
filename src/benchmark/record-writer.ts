import type { writeSync } from 'node:fs';
import { OutputError } from '../errors/index.js';
import type { RequestRecord } from '../metrics/record.js';
import { describeFsError } from '../store/output-dir.js';
import { RequestsJsonlSink } from '../store/requests-jsonl.js';

/**
 * Writes the run's records to requests.jsonl and survives a failed write (issue #16). On the first failure it fires
 * `stopSignal` (reason 'output_error': the load starts no new request) and keeps that record and every later one
 * in memory; finish() retries each of them once, and counts those that still fail as lost.
 */
export class RecordWriter {
  readonly #sink: RequestsJsonlSink;
  readonly #path: string;
  readonly #stop = new AbortController();
  readonly #pending: RequestRecord[] = [];
  #error: unknown;

  /** Opens `path` for append; `write` is writeSync (a test gives a failing one). */
  constructor(path: string, write?: typeof writeSync) {
    this.#path = path;
    this.#sink = RequestsJsonlSink.open(path, write);
  }

  /** Fires (reason 'output_error') at the first failed write. */
  get stopSignal(): AbortSignal {
    return this.#stop.signal;
  }

  /** Appends one record, or after a failed write keeps it for finish(). Never throws. */
  write(record: RequestRecord): void {
    if (this.#error === undefined) {
      try {
        this.#sink.write(record);
        return;
      } catch (error) {
        this.#error = error;
        this.#stop.abort('output_error');
      }
    }
    this.#pending.push(record);
  }

  /**
   * Retries each kept record once, then fsyncs and closes the file. Returns the OutputError to end the run with
   * (naming the file, the first cause and the lost_records count), or undefined when every record is on disk.
   */
  finish(): OutputError | undefined {
    let lost = 0;
    for (const record of this.#pending) {
      try {
        this.#sink.write(record);
      } catch {
        lost += 1;
      }
    }
    this.#pending.length = 0;
    try {
      this.#sink.close();
    } catch (error) {
      this.#error ??= error;
    }
    if (this.#error === undefined) return undefined;
    return new OutputError(this.#path, describeFsError(this.#error), lost, { cause: this.#error });
  }
}
