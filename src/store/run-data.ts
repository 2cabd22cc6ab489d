import type { ReplicaRow, RoutingLoss } from '../metrics/replica-tally.js';
import { MISS_CAUSES, type MissCause, type RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import { existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ConfigError, DatasetError } from '../errors/index.js';
import type { ClientHealth } from '../metrics/client-health.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import type { RequestRecord } from '../metrics/record.js';
import { RunAggregate } from '../metrics/run-aggregate.js';
import type { Summary } from '../metrics/summary.js';
import { Rng } from '../util/rng.js';
import { readResultsFile, type StoredFacts, type StoredResults } from './results-reader.js';
import { streamRequestsJsonl } from './requests-jsonl.js';
import { counted } from '../util/plural.js';
import type { GpuResults } from '../metrics/gpu-types.js';

/** File names inside a results directory. */
export const RESULTS_FILE = 'results.json';
/** The per-request records file inside a results directory. */
export const REQUESTS_FILE = 'requests.jsonl';

/**
 * Records (count) a report holds in memory by default (~1.2 KB of heap each with its itl_ms array, so ~120 MB). A run
 * with more is reported from a uniform random sample of this many records; see loadRunData.
 */
export const REPORT_MAX_RECORDS = 100_000;

/** Seed of the sampling RNG: fixed, so the same requests.jsonl always gives the same sample (and the same report). */
export const REPORT_SAMPLE_SEED = 0x63686c64;

/** How loadRunData reads the records. */
export interface LoadRunDataOptions {
  /**
   * Records kept in memory (count). Up to this many, every record is loaded; above it, `records` is a uniform random
   * sample of this size (reservoir sampling, seeded by REPORT_SAMPLE_SEED). `Infinity` keeps every record.
   * @default REPORT_MAX_RECORDS
   */
  maxRecords?: number;
  /**
   * results.json as the run that wrote it holds it (results-reader's writtenResults), read instead of the file: the
   * end of `chatload run` renders its reports from the document it has just written.
   */
  results?: StoredResults;
}

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
  /**
   * Every record of requests.jsonl (warmup and failed included), read tolerantly, in file order; or, when the file
   * holds more than the load's maxRecords (default REPORT_MAX_RECORDS), a uniform sample of that many, still in file
   * order (`sampled` is then true). Empty when the file is missing.
   */
  records: RequestRecord[];
  /** True when `records` is a uniform sample of the run's records rather than all of them. */
  sampled: boolean;
  /** Records in requests.jsonl (count, every one, whether or not `records` is a sample); 0 when the file is missing. */
  recordsTotal: number;
  /** True when requests.jsonl was found. */
  hasRecords: boolean;
  /**
   * From results.json (all records) when the run finished. Otherwise from every record, through a RunAggregate: exact
   * when they are all loaded; when sampled, every counter, total and throughput is exact and the statistics come from
   * histograms (approximate_metrics lists them).
   */
  summary: Summary;
  /** From results.json when the run finished. Otherwise from every record, as the summary. */
  perTurn: TurnSummary[];
  /** results.json's `prefix_cache` (actual against expected cached tokens, the model used); null when absent. */
  prefixCache: RunPrefixCache | null;
  /** results.json's `replicas` (one row per replica behind a router); null when absent. */
  replicas: ReplicaRow[] | null;
  /** results.json's `prefix_cache.routing` (the loss to routing); null when absent. */
  routing: RoutingLoss | null;
  /** results.json's `gpu` (GPU power and energy from a dcgm-exporter page); null when absent. */
  gpu: GpuResults | null;
  clientHealth: ClientHealth | null;
  /** The run's options as results.json holds them (already redacted, redacted again here); empty when unknown. */
  config: Record<string, unknown>;
  /** The keys of `config` that were defaults, not given (results.json `defaulted_options`); null when not recorded. */
  defaulted: string[] | null;
  /** Run facts shown in the report header: model, url, dataset, stop reason, ... (strings, numbers; may be empty). */
  facts: StoredFacts;
  /** The engine's conversation counts; empty when unknown. */
  conversations: Record<string, number>;
  /** Warnings the run recorded (results.json), plus notes about how this data was read (unfinished run, sample). */
  warnings: string[];
}

/**
 * Reads a results directory (results.json and/or requests.jsonl). Throws DatasetError when the directory holds
 * neither file, or when results.json is not one chatload reads (readResultsFile: bad JSON, another major, a field of the wrong type); ConfigError for a maxRecords that is not a whole number
 * >= 0 (or Infinity). Unknown record fields are kept; missing optional ones are tolerated (see normalizeRecord).
 *
 * requests.jsonl is streamed once, so memory is bounded by `maxRecords` records whatever the file's size: above that
 * many, `records` is a seeded uniform sample (see RunData.records) and a warning says what comes from it. A finished
 * run's summary and per-turn tables come from results.json either way.
 */
export async function loadRunData(dirPath: string, options: LoadRunDataOptions = {}): Promise<RunData> {
  const maxRecords = options.maxRecords ?? REPORT_MAX_RECORDS;
  if (!(maxRecords === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxRecords) && maxRecords >= 0))) {
    throw new ConfigError(`maxRecords: expected a whole number >= 0 or Infinity, got ${maxRecords}`);
  }
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
  // results.json first: whether the pass over the records must also summarize them depends on what it holds.
  const stored = options.results ?? (hasResults ? readResultsFile(resultsPath) : null);
  const read = hasRecords
    ? await readRecords(requestsPath, maxRecords, stored === null || stored.perTurn === null)
    : { records: [], total: 0, aggregate: null };
  const { records, total, aggregate } = read;
  const sampled = total > records.length;
  const summary = stored?.summary ?? (aggregate ?? new RunAggregate()).summary();
  const perTurn = stored?.perTurn ?? (aggregate ?? new RunAggregate()).perTurn();
  const warnings: string[] = [];
  const label = basename(dir);
  const { replicas, routing } = replicasOf(stored, aggregate);
  const common = { dir, label, records, sampled, recordsTotal: total, hasRecords, summary, perTurn, prefixCache: stored?.prefixCache ?? null, replicas, routing, gpu: stored?.gpu ?? null };

  if (stored === null) {
    warnings.push(
      `The run did not finish: ${RESULTS_FILE} is missing, so these figures are summarized from the ` +
        `${counted(total, 'record')} in ${REQUESTS_FILE} (requests in flight when it stopped are not included).`,
    );
    if (sampled) warnings.push(...samplingWarnings(total, records.length, { summaryFromResults: false, perTurnFromResults: false }));
    return { ...common, finished: false, clientHealth: null, config: {}, defaulted: null, facts: {}, conversations: {}, warnings };
  }

  if (!hasRecords) warnings.push(`${REQUESTS_FILE} is missing: distributions, time series and the errors list are left out.`);
  if (sampled) warnings.push(...samplingWarnings(total, records.length, { summaryFromResults: true, perTurnFromResults: stored.perTurn !== null }));
  const conversations: Record<string, number> = {};
  for (const [k, v] of Object.entries(stored.conversations ?? {})) if (typeof v === 'number') conversations[k] = v;
  return {
    ...common,
    finished: true,
    clientHealth: stored.clientHealth,
    config: stored.config,
    defaulted: stored.defaulted,
    facts: { ...stored.facts },
    conversations,
    warnings: [...stored.warnings, ...warnings],
  };
}

/** What the sample's warnings say, in the report's words. */
function samplingWarnings(total: number, size: number, from: { summaryFromResults: boolean; perTurnFromResults: boolean }): string[] {
  const head = `${total} records: charts, the errors list and the Excel raw-data sheet use a uniform sample of ${size} (the CSV holds every record)`;
  if (from.summaryFromResults && from.perTurnFromResults) return [`${head}; the summary and per-turn tables are from ${RESULTS_FILE} (all records).`];
  const summary = from.summaryFromResults
    ? `The summary is from ${RESULTS_FILE} (all records).`
    : 'The summary counts every record: its counts, totals, ratios and throughputs are exact, its statistics come from ' +
      'histograms (percentiles within 0.1%).';
  const perTurn = from.perTurnFromResults
    ? `The per-turn table is from ${RESULTS_FILE} (all records).`
    : 'The per-turn table counts every record too, its statistics from histograms.';
  return [`${head}.`, `${summary} ${perTurn}`];
}

/**
 * results.json's `replicas` and `prefix_cache.routing`; for a run that did not finish, its records' aggregate's (every
 * record, as the summary's).
 */
function replicasOf(stored: StoredResults | null, aggregate: RunAggregate | null): Pick<RunData, 'replicas' | 'routing'> {
  if (stored === null) {
    const rows = aggregate?.replicas() ?? [];
    return { replicas: rows.length > 0 ? rows : null, routing: aggregate?.routing() ?? null };
  }
  return { replicas: stored.replicas, routing: stored.routing };
}

/** The records read: all of them, or a uniform sample of maxRecords; `aggregate` is set only when asked for. */
interface RecordsRead {
  /** Normalized records in file order. */
  records: RequestRecord[];
  /** Records in the file. */
  total: number;
  /** Every record aggregated (exact up to maxRecords, statistics from histograms past it). */
  aggregate: RunAggregate | null;
}

/**
 * Streams requests.jsonl once. The first `maxRecords` records are kept; past them, record i (0-based) replaces a
 * uniformly chosen slot with probability maxRecords / (i + 1) (reservoir sampling, Vitter's Algorithm R), so every
 * record ends up in the sample with the same probability. Only kept records are normalized, unless `summarize`: then
 * every record is normalized and added to a RunAggregate whose exact limit is maxRecords.
 */
async function readRecords(path: string, maxRecords: number, summarize: boolean): Promise<RecordsRead> {
  const rng = new Rng(REPORT_SAMPLE_SEED);
  const kept: RequestRecord[] = [];
  /** The file index (0-based) of the record in each slot of `kept`, to restore file order at the end. */
  const keptAt: number[] = [];
  const aggregate = summarize ? new RunAggregate({ exactRecords: maxRecords }) : null;
  let total = 0;
  await streamRequestsJsonl(path, (raw) => {
    const i = total++;
    const record = aggregate === null && i >= maxRecords ? null : normalizeRecord(raw);
    if (record !== null) aggregate?.add(record);
    if (i < maxRecords) {
      kept.push(record!);
      keptAt.push(i);
      return;
    }
    const slot = Math.floor(rng.next() * (i + 1));
    if (slot < maxRecords) {
      kept[slot] = record ?? normalizeRecord(raw);
      keptAt[slot] = i;
    }
  });
  if (total <= maxRecords) return { records: kept, total, aggregate };
  const order = kept.map((_, slot) => slot).sort((a, b) => keptAt[a]! - keptAt[b]!);
  return { records: order.map((slot) => kept[slot]!), total, aggregate };
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
    itl_ms: Array.isArray(r.itl_ms) ? finiteNumbers(r.itl_ms) : [],
    e2el_ms: e2el,
    latency_ms: num(r.latency_ms, e2el),
    input_num_tokens: num(r.input_num_tokens, 0),
    input_tokens_source: r.input_tokens_source === 'server' ? 'server' : 'local',
    output_num_tokens: num(r.output_num_tokens, 0),
    output_tokens_source: r.output_tokens_source === 'server' ? 'server' : 'local',
    cached_tokens: numOrNull(r.cached_tokens),
    expected_cached_tokens: num(r.expected_cached_tokens, 0),
    // Records of runs before the global model (issue #13) had only the own-history figure, as expected_cached_tokens.
    expected_cached_tokens_infinite: num(r.expected_cached_tokens_infinite, num(r.expected_cached_tokens, 0)),
    expected_cached_tokens_own_history: num(r.expected_cached_tokens_own_history, num(r.expected_cached_tokens, 0)),
    ...cacheAccountFields(r),
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

/** The expected-cache model's per-record fields of issue #30, when the file has them (older files do not). */
function cacheAccountFields(r: Record<string, unknown>): Pick<RequestRecord, 'cache_model_input_tokens' | 'warm_start_tokens' | 'miss_cause'> {
  const out: Pick<RequestRecord, 'cache_model_input_tokens' | 'warm_start_tokens' | 'miss_cause'> = {};
  if ('cache_model_input_tokens' in r) out.cache_model_input_tokens = numOrNull(r.cache_model_input_tokens);
  if ('warm_start_tokens' in r) out.warm_start_tokens = num(r.warm_start_tokens, 0);
  if ('miss_cause' in r) out.miss_cause = typeof r.miss_cause === 'string' && (MISS_CAUSES as readonly string[]).includes(r.miss_cause) ? (r.miss_cause as MissCause) : null;
  return out;
}

/** The finite numbers of `values`: the array itself when that is all it holds (a record's ~128 gaps, not copied). */
function finiteNumbers(values: unknown[]): number[] {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) return values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  }
  return values as number[];
}
