import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { DatasetError } from '../errors/index.js';
import type { ClientHealth } from '../metrics/client-health.js';
import { summarizePerTurn, type TurnSummary } from '../metrics/per-turn.js';
import type { RequestRecord } from '../metrics/record.js';
import { summarize, type Summary } from '../metrics/summary.js';
import { redactSecrets } from './redact.js';
import { readRequestsJsonl } from './requests-jsonl.js';

/** File names inside a results directory. */
export const RESULTS_FILE = 'results.json';
/** The per-request records file inside a results directory. */
export const REQUESTS_FILE = 'requests.jsonl';

/**
 * Everything a report needs about one run, read from its results directory. When results.json is missing (the run
 * crashed or was killed), the summary and per-turn tables are recomputed from requests.jsonl and `finished` is false.
 */
export interface RunData {
  /** The results directory, absolute. */
  dir: string;
  /** A short name for the run (the directory's base name), used as a label in comparisons. */
  label: string;
  /** True when results.json was found: the run wrote its final files. */
  finished: boolean;
  /** Every record of requests.jsonl (warmup and failed included), read tolerantly; empty when the file is missing. */
  records: RequestRecord[];
  /** True when requests.jsonl was found. */
  hasRecords: boolean;
  summary: Summary;
  perTurn: TurnSummary[];
  clientHealth: ClientHealth | null;
  /** The run's options as results.json holds them (already redacted, redacted again here); empty when unknown. */
  config: Record<string, unknown>;
  /** Run facts shown in the report header: model, url, dataset, stop reason, ... (strings, numbers; may be empty). */
  facts: Record<string, unknown>;
  /** The engine's conversation counts; empty when unknown. */
  conversations: Record<string, number>;
  /** Warnings the run recorded (results.json), plus notes about how this data was read. */
  warnings: string[];
}

/** Keys of results.json shown as run facts, in this order, when present. */
const FACT_KEYS = [
  'model',
  'url',
  'dataset',
  'stop_reason',
  'tokenizer',
  'created_at',
  'chatload_version',
  'crashed_tasks',
] as const;

/**
 * Reads a results directory (results.json and/or requests.jsonl). Throws DatasetError when the directory holds
 * neither file, or when results.json is not a JSON object. Unknown record fields are kept; missing optional ones are
 * tolerated (see normalizeRecord).
 */
export function loadRunData(dirPath: string): RunData {
  const dir = resolve(dirPath);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new DatasetError({ file: dirPath }, 'not a results directory (expected a folder holding results.json or requests.jsonl)');
  }
  const resultsPath = join(dir, RESULTS_FILE);
  const requestsPath = join(dir, REQUESTS_FILE);
  const hasResults = existsSync(resultsPath);
  const hasRecords = existsSync(requestsPath);
  if (!hasResults && !hasRecords) {
    throw new DatasetError({ file: dirPath }, `holds neither ${RESULTS_FILE} nor ${REQUESTS_FILE}: nothing to report`);
  }
  const records = hasRecords ? readRequestsJsonl(requestsPath).map(normalizeRecord) : [];
  const warnings: string[] = [];
  const label = basename(dir);

  if (!hasResults) {
    warnings.push(
      `The run did not finish: ${RESULTS_FILE} is missing, so these figures are summarized from the ` +
        `${records.length} records in ${REQUESTS_FILE} (requests in flight when it stopped are not included).`,
    );
    return {
      dir,
      label,
      finished: false,
      records,
      hasRecords,
      summary: summarize(records),
      perTurn: summarizePerTurn(records),
      clientHealth: null,
      config: {},
      facts: {},
      conversations: {},
      warnings,
    };
  }

  const doc = readResults(resultsPath);
  if (!hasRecords) warnings.push(`${REQUESTS_FILE} is missing: distributions, time series and the errors list are left out.`);
  const summary = isObject(doc.summary) ? (doc.summary as unknown as Summary) : summarize(records);
  const perTurn = Array.isArray(doc.per_turn) ? (doc.per_turn as TurnSummary[]) : summarizePerTurn(records);
  const facts: Record<string, unknown> = {};
  for (const key of FACT_KEYS) if (doc[key] !== undefined && doc[key] !== null) facts[key] = doc[key];
  if (isObject(doc.environment)) facts.environment = doc.environment;
  const conversations: Record<string, number> = {};
  if (isObject(doc.conversations)) {
    for (const [k, v] of Object.entries(doc.conversations)) if (typeof v === 'number') conversations[k] = v;
  }
  const runWarnings = Array.isArray(doc.warnings) ? doc.warnings.filter((w): w is string => typeof w === 'string') : [];
  return {
    dir,
    label,
    finished: true,
    records,
    hasRecords,
    summary,
    perTurn,
    clientHealth: isObject(doc.client_health) ? (doc.client_health as unknown as ClientHealth) : null,
    // Defensive: results.json is already redacted, but a hand-edited or older file may not be.
    config: redactSecrets(isObject(doc.config) ? doc.config : {}),
    facts: redactSecrets(facts),
    conversations,
    warnings: [...runWarnings, ...warnings],
  };
}

function readResults(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new DatasetError({ file: path }, 'not valid JSON', { cause: error });
  }
  if (!isObject(parsed)) throw new DatasetError({ file: path }, 'expected a JSON object (a chatload results.json)');
  return parsed;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const num = (value: unknown, fallback: number): number => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);
const numOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * A record as reports use it: every field RequestRecord declares is present with the right type (missing numbers
 * become 0 or null, a missing itl_ms becomes []), and unknown fields (e.g. open-loop `schedule_lag_ms`) are kept as
 * they are. Records written by older or newer versions therefore render instead of crashing a report.
 */
export function normalizeRecord(raw: RequestRecord): RequestRecord {
  const r = raw as unknown as Record<string, unknown>;
  const e2el = num(r.e2el_ms, num(r.latency_ms, 0));
  const sent = num(r.sent_at_ms, 0);
  return {
    ...raw,
    conversation_id: String(r.conversation_id ?? ''),
    conversation_index: num(r.conversation_index, 0),
    turn: num(r.turn, 1),
    client_id: num(r.client_id, 0),
    warmup: r.warmup === true,
    retries: num(r.retries, 0),
    start_time_ms: num(r.start_time_ms, 0),
    sent_at_ms: sent,
    first_token_at_ms: numOrNull(r.first_token_at_ms),
    done_at_ms: num(r.done_at_ms, sent + e2el),
    ttft_ms: numOrNull(r.ttft_ms),
    ttft_content_ms: numOrNull(r.ttft_content_ms),
    ttft_reasoning_ms: numOrNull(r.ttft_reasoning_ms),
    tpot_ms: numOrNull(r.tpot_ms),
    itl_ms: Array.isArray(r.itl_ms) ? r.itl_ms.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)) : [],
    e2el_ms: e2el,
    latency_ms: num(r.latency_ms, e2el),
    input_num_tokens: num(r.input_num_tokens, 0),
    input_tokens_source: r.input_tokens_source === 'server' ? 'server' : 'local',
    output_num_tokens: num(r.output_num_tokens, 0),
    output_tokens_source: r.output_tokens_source === 'server' ? 'server' : 'local',
    cached_tokens: numOrNull(r.cached_tokens),
    expected_cached_tokens: num(r.expected_cached_tokens, 0),
    input_num_turns: num(r.input_num_turns, 0),
    output_num_chunks: num(r.output_num_chunks, 0),
    output_num_first_chunk_tokens: num(r.output_num_first_chunk_tokens, 0),
    approx_cached_percent: num(r.approx_cached_percent, 0),
    max_tokens: numOrNull(r.max_tokens),
    finish_reason: typeof r.finish_reason === 'string' ? r.finish_reason : null,
    status: r.status === 'error' ? 'error' : 'ok',
    error_kind: typeof r.error_kind === 'string' ? (r.error_kind as RequestRecord['error_kind']) : r.status === 'error' ? 'other' : null,
    error: typeof r.error === 'string' ? r.error : null,
    http_status: numOrNull(r.http_status),
  };
}
