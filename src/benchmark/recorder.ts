import type { writeSync } from 'node:fs';
import type { LoadObserver } from '../load/types.js';
import type { OutputError } from '../errors/index.js';
import { ErrorTally } from '../metrics/error-tally.js';
import type { RequestRecord } from '../metrics/record.js';
import { analyzeAggregate, type RunAnalysis } from '../metrics/run-analysis.js';
import { RunAggregate, runAggregateOptions, type SerializedRunAggregate } from '../metrics/run-aggregate.js';
import type { SummaryPlan } from '../options/run-plan.js';
import { analyzeRecordsFile } from '../store/records-file-analysis.js';
import { streamRequestsJsonl } from '../store/requests-jsonl.js';
import { shiftRecordClock } from '../store/resume-state.js';
import { RecordWriter } from './record-writer.js';

/** What a Recorder needs: the run's files and summary plan, what a resumed run carries over, and where to say things. */
export interface RecorderOptions {
  requestsFile: string;
  summary: SummaryPlan;
  /** Worker threads: more than one aggregate their own records (see addParts). */
  workers: number;
  /** --resume: the interrupted run's clock offset, outcomes and stale-connection resends, continued. */
  resumed?: { clockOffsetMs: number; outcomes: ErrorTally; staleConnectionResends: number };
  /** Told of each record after it is on disk (the live view, the library's caller). */
  observer?: LoadObserver;
  warn: (message: string) => void;
  /** Test-only: the writeSync requests.jsonl is appended with. */
  writeRecords?: typeof writeSync;
}

/**
 * Where a finished request goes (issue #33, part 1): its clock continued for a resumed run, requests.jsonl (a failed
 * write stops new requests: stopSignal), the outcome tally, the stale-connection count, the run's aggregate, the
 * one-time warnings, then the observers. With worker threads each part aggregates its own records in its thread and
 * the parts are added at the end (addParts); everything else is the same. The run's analysis comes from here too.
 */
export class Recorder {
  readonly outcomes: ErrorTally;
  readonly #writer: RecordWriter;
  readonly #options: RecorderOptions;
  readonly #aggregate: RunAggregate;
  #parts: Array<SerializedRunAggregate | undefined> | undefined;
  #staleConnectionResends: number;
  /** An empty answer is warned about once, not per request (the summary counts them). */
  #warnedEmpty = false;
  /** Impossible usage fields the server sent, by field (results.json `invalid_usage`), each warned about once. */
  readonly invalidUsage = new Map<string, number>();

  constructor(options: RecorderOptions) {
    this.#options = options;
    this.#writer = new RecordWriter(options.requestsFile, options.writeRecords);
    this.#aggregate = new RunAggregate(runAggregateOptions(options.summary));
    this.outcomes = options.resumed?.outcomes ?? new ErrorTally();
    this.#staleConnectionResends = options.resumed?.staleConnectionResends ?? 0;
  }

  /** Fires (reason 'output_error') at the first failed write of requests.jsonl: the load starts no new request. */
  get stopSignal(): AbortSignal {
    return this.#writer.stopSignal;
  }

  /** Stale-connection resends of every record so far (a resumed run's included). */
  get staleConnectionResends(): number {
    return this.#staleConnectionResends;
  }

  /** One finished request, as the load (or a worker thread) built it. Never throws. */
  readonly record = (loadRecord: RequestRecord): void => {
    // A resumed run's records continue the interrupted run's clock.
    const record = shiftRecordClock(loadRecord, this.#options.resumed?.clockOffsetMs ?? 0);
    this.#writer.write(record);
    if (record.error_kind === 'empty_answer' && !this.#warnedEmpty) {
      this.#warnedEmpty = true;
      this.#options.warn(`the server answered with no content (${record.error}); such replies count as failed requests (empty_answer)`);
    }
    for (const field of record.invalid_usage ?? []) {
      const seen = this.invalidUsage.get(field) ?? 0;
      this.invalidUsage.set(field, seen + 1);
      if (seen === 0) {
        this.#options.warn(`the server's usage had an impossible ${field} (negative, fractional, past a billion, or above its total): dropped, and counted in results.json invalid_usage`);
      }
    }
    this.#staleConnectionResends += record.stale_connection_resends;
    this.outcomes.add(record);
    if (this.#options.workers === 1) this.#aggregate.add(record);
    this.#options.observer?.onRecord?.(record);
  };

  /** The worker threads' aggregates, in part order (undefined for a part that died with its own). */
  addParts(parts: Array<SerializedRunAggregate | undefined>): void {
    this.#parts = parts;
  }

  /** Writes what a failed write kept, closes requests.jsonl; the OutputError to end the run with, if any. */
  finish(): OutputError | undefined {
    return this.#writer.finish();
  }

  /**
   * The run's analysis from the aggregate recorded during the run (requests.jsonl is read again only for warmup
   * percentages above 0 past the aggregate's exact limits). With worker threads, from the parts' aggregates; if a part
   * died with its aggregate, or the run was resumed (requests.jsonl holds the interrupted run's records too), from
   * requests.jsonl, which holds every record.
   */
  async analysis(): Promise<RunAnalysis> {
    const { requestsFile, summary, warn } = this.#options;
    if (this.#options.resumed !== undefined) return analyzeRecordsFile(requestsFile, summary);
    const parts = this.#parts;
    if (parts !== undefined) {
      if (parts.some((p) => p === undefined)) {
        warn('a worker thread died without its aggregate: the summaries were computed from requests.jsonl instead');
        return analyzeRecordsFile(requestsFile, summary);
      }
      for (const part of parts) this.#aggregate.merge(RunAggregate.fromJSON(part));
    }
    return analyzeAggregate(this.#aggregate, (visit) => streamRequestsJsonl(requestsFile, visit));
  }
}
