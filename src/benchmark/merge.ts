import { replicaRowsFor } from '../metrics/replica-tally.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, DatasetError } from '../errors/index.js';
import type { ClientHealth } from '../metrics/client-health.js';
import { sumConversationCounts, type ConversationCounts } from '../metrics/conversation-counts.js';
import type { RequestRecord } from '../metrics/record.js';
import { EXACT_ANALYSIS_RECORDS, RunAggregate, runAggregateOptions, type RecordReplay } from '../metrics/run-aggregate.js';
import { normalizeRunOptions } from '../options/run-options.js';
import { redactSecrets } from '../store/redact.js';
import { countJsonlLines, RequestsJsonlSink, streamRequestsJsonl } from '../store/requests-jsonl.js';
import { buildResultsDocument, writeJsonAtomic } from '../store/results-json.js';
import { loadRunData, normalizeRecord, readResults, REQUESTS_FILE, RESULTS_FILE } from '../store/run-data.js';
import { writeRunReports } from '../report/write-reports.js';
import { analyzeAggregate } from '../metrics/run-analysis.js';
import { prepareOutputDir } from '../store/output-dir.js';

/**
 * Records (lines of all the runs' requests.jsonl together) up to which `chatload merge` is exact (--max-records): the
 * same bound as a run's own exact analysis, since exact mode holds every record (~1.2 KB each) to sort them.
 */
export const DEFAULT_MERGE_MAX_RECORDS = EXACT_ANALYSIS_RECORDS;

/** How to merge. */
export interface MergeOptions {
  /**
   * Up to this many records in all, every record is loaded and every statistic is exact. Above it, the records are
   * streamed and the statistics come from histograms (percentiles within 0.1%): see docs/SCALING.md.
   * @default DEFAULT_MERGE_MAX_RECORDS
   */
  maxRecords?: number;
}

/** What a merge produced. */
export interface MergeResult {
  outputDir: string;
  runs: number;
  records: number;
  /** 'exact': records held, every statistic exact. 'histogram': records streamed, statistics from histograms. */
  mode: 'exact' | 'histogram';
  files: { requests: string; results: string; html?: string };
  /** What the merge noticed or left out (also in results.json's `warnings`). */
  warnings: string[];
}

/** Rounds a rebased time to microseconds, as the records' times are. */
const roundUs = (x: number): number => Math.round(x * 1000) / 1000;

/**
 * Puts one record on the merge's clock: its send time becomes its wall-clock start minus `t0` (the earliest start of
 * all records merged), and its other times move with it.
 */
export function rebaseRecord(r: RequestRecord, t0: number): RequestRecord {
  const shift = r.start_time_ms - t0 - r.sent_at_ms;
  const move = (x: number | null): number | null => (x === null ? null : roundUs(x + shift));
  return {
    ...r,
    sent_at_ms: roundUs(r.sent_at_ms + shift),
    first_token_at_ms: move(r.first_token_at_ms),
    done_at_ms: roundUs(r.done_at_ms + shift),
    scheduled_at_ms: move(r.scheduled_at_ms ?? null),
  };
}

/**
 * Puts records of several runs on one clock (rebaseRecord with the earliest start of all), sorted by send time.
 * Records of one run keep their spacing exactly.
 */
export function rebaseRecords(records: readonly RequestRecord[]): RequestRecord[] {
  let t0 = Number.POSITIVE_INFINITY;
  for (const r of records) t0 = Math.min(t0, r.start_time_ms);
  return records.map((r) => rebaseRecord(r, t0)).sort((a, b) => a.sent_at_ms - b.sent_at_ms);
}

/** The options the runs were made with, as far as their summaries need them (goodput SLOs, warmup percentages). */
function summaryOptions(config: Record<string, unknown>) {
  const goodput = Array.isArray(config.goodput) ? config.goodput.filter((x): x is string => typeof x === 'string') : undefined;
  const warmupPercentages = Array.isArray(config.warmupPercentages) ? config.warmupPercentages.filter((x): x is number => typeof x === 'number') : undefined;
  return runAggregateOptions(normalizeRunOptions({ goodput, warmupPercentages: warmupPercentages?.length ? warmupPercentages : undefined }));
}

/**
 * `chatload merge DIR... -o OUT`: combines the results folders of shards (or any runs) into one results folder of the
 * same format. Every record is put on one clock (rebaseRecord), written to the merged requests.jsonl and added to one
 * RunAggregate, which makes every summary (warmup percentages included) as one run's would be; the conversation counts
 * are summed. Up to `maxRecords` records in all the records are held and sorted by send time, and every statistic is
 * exact; above it they are streamed (twice, three times for warmup percentages above 0) and never held, and the
 * statistics come from histograms. Partial shards (no results.json) merge too; the result says how many were unfinished.
 */
export async function mergeRuns(dirs: readonly string[], out: string, options: MergeOptions = {}): Promise<MergeResult> {
  if (dirs.length === 0) throw new DatasetError({ file: '(no folders)' }, 'expected at least one results folder to merge');
  const maxRecords = options.maxRecords ?? DEFAULT_MERGE_MAX_RECORDS;
  if (!Number.isSafeInteger(maxRecords) || maxRecords < 0) throw new ConfigError(`--max-records: expected a whole number >= 0, got ${maxRecords}`);
  const requestFiles: string[] = [];
  for (const dir of dirs) requestFiles.push(await requestsFileOf(dir));
  let total = 0;
  for (const file of requestFiles) total += await countJsonlLines(file);
  const mode = total <= maxRecords ? 'exact' : 'histogram';

  const runs = dirs.map(readRunResults);
  const first = runs.find((r) => r.finished) ?? runs[0]!;
  const aggregate = new RunAggregate({ ...summaryOptions(first.config), exactRecords: mode === 'exact' ? Number.POSITIVE_INFINITY : 0 });
  const outputDir = prepareOutputDir(out);
  const files: MergeResult['files'] = { requests: join(outputDir, REQUESTS_FILE), results: join(outputDir, RESULTS_FILE) };
  const sink = RequestsJsonlSink.open(files.requests);
  let merged: { perRun: number[]; replay: RecordReplay };
  try {
    const write = (r: RequestRecord): void => {
      sink.write(r);
      aggregate.add(r);
    };
    merged = mode === 'exact' ? await mergeHeld(requestFiles, write) : await mergeStreamed(requestFiles, write);
  } finally {
    sink.close();
  }
  const analysis = await analyzeAggregate(aggregate, merged.replay);

  const warnings: string[] = [];
  if (mode === 'histogram') {
    warnings.push(
      `${total} records exceed --max-records ${maxRecords}: every statistic's percentiles (summary, per turn, warmup percentages) come from histograms, within 0.1% of the exact ones; counts, totals, ratios, throughputs, goodput, means, std, min and max and the per-conversation table are exact (summary.approximate_metrics)`,
      'histogram merge: requests.jsonl holds every record rebased onto one clock, in each run\'s file order (not sorted by send time); report.html draws its charts from a uniform sample of the records',
    );
  }
  const unfinished = runs.filter((r) => !r.finished).length;
  if (unfinished > 0) warnings.push(`${unfinished} of the merged runs did not finish (no results.json): their records are included`);
  writeJsonAtomic(
    files.results,
    buildResultsDocument({
      config: first.config,
      summary: analysis.summary,
      warmupPercentages: analysis.warmupPercentages,
      perTurn: analysis.perTurn,
      clientHealth: null,
      conversations: { ...sumConversationCounts(runs.flatMap((r) => (r.conversations === null ? [] : [r.conversations]))) },
      histograms: analysis.histograms,
      peaks: analysis.peaks,
      extra: {
        ...first.facts,
        ...(mode === 'histogram' ? { merge_mode: 'histogram' } : {}),
        merged_from: runs.map((r, i) => ({ dir: r.dir, finished: r.finished, records: merged.perRun[i], shard: r.shard, client_health: r.clientHealth })),
        warnings,
        conversation_stats: analysis.conversationStats,
        agentic: analysis.agentic,
        per_conversation: analysis.perConversation,
        // Rebuilt from the records, as a run builds them (issue #31); the routing figures alone under prefix_cache.
        replicas: analysis.replicas.length > 0 ? replicaRowsFor(analysis.replicas, runs.every((r) => r.comparable)) : null,
        ...(analysis.routing === null ? {} : { prefix_cache: { routing: analysis.routing } }),
      },
    }),
  );
  // Past REPORT_MAX_RECORDS the report holds a uniform sample of the records (loadRunData's limit), so it is bounded too.
  const reports = await writeRunReports(outputDir, { html: true });
  if (reports.html !== undefined) files.html = reports.html;
  return { outputDir, runs: runs.length, records: aggregate.records, mode, files, warnings };
}

/** A run's requests.jsonl; the error a merge gives when the folder is not a results folder or lacks the file. */
async function requestsFileOf(dir: string): Promise<string> {
  const path = join(resolve(dir), REQUESTS_FILE);
  if (existsSync(path)) return path;
  await loadRunData(dir); // throws the precise error for a folder that is no results folder at all
  throw new DatasetError({ file: path }, 'a merge needs every run\'s requests.jsonl');
}

/** Exact mode: every record held, rebased, sorted by send time, then written and aggregated in that order. */
async function mergeHeld(requestFiles: readonly string[], write: (r: RequestRecord) => void): Promise<{ perRun: number[]; replay: RecordReplay }> {
  const all: RequestRecord[] = [];
  const perRun: number[] = [];
  for (const file of requestFiles) perRun.push(await streamRecords(file, (r) => all.push(r)));
  const records = rebaseRecords(all);
  for (const r of records) write(r);
  return {
    perRun,
    replay: async (visit) => {
      for (const r of records) visit(r);
    },
  };
}

/**
 * Histogram mode, records never held: pass 1 finds the common clock's t0 (the earliest start), pass 2 rebases each
 * record and writes it in each run's file order (sorting would need them all at once). The replay streams them again.
 */
async function mergeStreamed(requestFiles: readonly string[], write: (r: RequestRecord) => void): Promise<{ perRun: number[]; replay: RecordReplay }> {
  let t0 = Number.POSITIVE_INFINITY;
  const perRun: number[] = [];
  for (const file of requestFiles) {
    perRun.push(
      await streamRecords(file, (r) => {
        if (r.start_time_ms < t0) t0 = r.start_time_ms;
      }),
    );
  }
  const each = async (visit: (r: RequestRecord) => void): Promise<void> => {
    for (const file of requestFiles) await streamRecords(file, (r) => visit(rebaseRecord(r, t0)));
  };
  await each(write);
  return { perRun, replay: each };
}

/** What a merge keeps of a run's results.json: small parts only (the rest, e.g. per_conversation, comes from the records). */
interface RunResults {
  dir: string;
  finished: boolean;
  config: Record<string, unknown>;
  facts: Record<string, unknown>;
  /** The engine's conversation counts; null when unknown (no results.json). */
  conversations: Partial<ConversationCounts> | null;
  clientHealth: ClientHealth | null;
  shard: unknown;
  /** False when the run's expected-cache model was not comparable with the server's counts (prefix_cache.comparable). */
  comparable: boolean;
}

/** Keys of a run's results.json carried into the merged one (facts of the first finished run). */
const FACT_KEYS = ['model', 'url', 'dataset', 'stop_reason', 'tokenizer', 'crashed_tasks'] as const;

function readRunResults(dir: string): RunResults {
  const path = join(resolve(dir), RESULTS_FILE);
  const empty: RunResults = { dir: resolve(dir), finished: false, config: {}, facts: {}, conversations: null, clientHealth: null, shard: null, comparable: true };
  if (!existsSync(path)) return empty;
  const doc = readResults(path);
  const facts: Record<string, unknown> = {};
  for (const key of FACT_KEYS) if (doc[key] !== undefined && doc[key] !== null) facts[key] = doc[key];
  const conversations: Partial<Record<keyof ConversationCounts, number>> = {};
  if (isObject(doc.conversations)) {
    for (const [k, v] of Object.entries(doc.conversations)) if (typeof v === 'number') conversations[k as keyof ConversationCounts] = v;
  }
  return {
    ...empty,
    finished: true,
    comparable: !(isObject(doc.prefix_cache) && doc.prefix_cache.comparable === false),
    config: redactSecrets(isObject(doc.config) ? doc.config : {}),
    facts: redactSecrets(facts),
    conversations,
    clientHealth: isObject(doc.client_health) ? (doc.client_health as unknown as ClientHealth) : null,
    shard: doc.shard ?? null,
  };
}

/** Streams a run's requests.jsonl as normalized records (older files' missing fields filled, as loadRunData does). */
function streamRecords(path: string, onRecord: (record: RequestRecord) => void): Promise<number> {
  return streamRequestsJsonl(path, (record) => onRecord(normalizeRecord(record)));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
