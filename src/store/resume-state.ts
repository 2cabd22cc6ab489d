import { existsSync } from 'node:fs';
import type { RequestRecord } from '../metrics/record.js';
import { streamRequestsJsonl } from './requests-jsonl.js';

/** Where one conversation of an interrupted run stands, from its records in requests.jsonl. */
export interface ResumePoint {
  /** The conversation's id, to check that the dataset is the same. */
  readonly id: string;
  /** User turns answered in a row from turn 1 (status ok): the turn to send next is turnsDone + 1. */
  readonly turnsDone: number;
  /** True when a request of it failed (any kind but `aborted`, which is a cut by the run's stop): it ended. */
  readonly ended: boolean;
  /** Input and output tokens of its last answered turn: what a perfect prefix cache could reuse next. */
  readonly lastInputTokens: number;
  readonly lastOutputTokens: number;
}

/** What an interrupted run left in requests.jsonl: where each conversation stands and where its clock ended. */
export interface ResumeState {
  /** By dataset index (`conversation_index`). */
  readonly conversations: ReadonlyMap<number, ResumePoint>;
  /** Records read (torn lines skipped). */
  readonly records: number;
  /** Records that took from the -n budget (every one but warmup). */
  readonly budgetRecords: number;
  /** The latest `done_at_ms`: the resumed run's records continue on this clock. */
  readonly clockEndMs: number;
}

/**
 * Reads the interrupted run in `path` (requests.jsonl) for --resume; `visit` sees every record (the run's tallies).
 * A missing file is a run with nothing done.
 */
export async function readResumeState(path: string, visit: (record: RequestRecord) => void = () => {}): Promise<ResumeState> {
  const turns = new Map<number, { id: string; ok: Map<number, RequestRecord>; ended: boolean }>();
  let records = 0;
  let budgetRecords = 0;
  let clockEndMs = 0;
  if (existsSync(path)) {
    await streamRequestsJsonl(path, (record) => {
      records += 1;
      if (!record.warmup) budgetRecords += 1;
      clockEndMs = Math.max(clockEndMs, record.done_at_ms);
      visit(record);
      // A sub-agent's records share its session's index: the session's own steps say where it resumes (its sub-agents
      // of skipped steps ran in the interrupted run and are not run again).
      if (record.parent_conversation_id != null) return;
      let entry = turns.get(record.conversation_index);
      if (entry === undefined) turns.set(record.conversation_index, (entry = { id: record.conversation_id, ok: new Map(), ended: false }));
      if (record.status === 'ok') entry.ok.set(record.turn, record);
      else if (record.error_kind !== 'aborted') entry.ended = true;
    });
  }
  const conversations = new Map<number, ResumePoint>();
  for (const [index, { id, ok, ended }] of turns) {
    let turnsDone = 0;
    while (ok.has(turnsDone + 1)) turnsDone += 1;
    const last = ok.get(turnsDone);
    conversations.set(index, { id, turnsDone, ended, lastInputTokens: last?.input_num_tokens ?? 0, lastOutputTokens: last?.output_num_tokens ?? 0 });
  }
  return { conversations, records, budgetRecords, clockEndMs };
}

/** A record of the resumed run on the interrupted run's clock: its monotonic times moved by `offsetMs`. */
export function shiftRecordClock(record: RequestRecord, offsetMs: number): RequestRecord {
  if (offsetMs === 0) return record;
  const move = (x: number | null): number | null => (x === null ? null : Math.round((x + offsetMs) * 1000) / 1000);
  return {
    ...record,
    sent_at_ms: move(record.sent_at_ms)!,
    first_token_at_ms: move(record.first_token_at_ms),
    done_at_ms: move(record.done_at_ms)!,
    scheduled_at_ms: move(record.scheduled_at_ms),
  };
}
