import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, DatasetError } from '../errors/index.js';
import type { ClientHealth } from '../metrics/client-health.js';
import { conversationStats, ConversationTally } from '../metrics/per-conversation.js';
import { PerTurnTally } from '../metrics/per-turn.js';
import { countsInHistograms, HISTOGRAM_METRICS, LatencyHistograms, type HistogramMetric } from '../metrics/histogram.js';
import type { RequestRecord } from '../metrics/record.js';
import { StreamingSummary } from '../metrics/streaming-summary.js';
import type { Summary } from '../metrics/summary.js';
import { normalizeRunOptions } from '../options/run-options.js';
import { redactSecrets } from '../report/redact.js';
import { countJsonlLines, RequestsJsonlSink, streamRequestsJsonl } from '../report/requests-jsonl.js';
import { buildResultsDocument, writeJsonAtomic } from '../report/results-json.js';
import { loadRunData, normalizeRecord, readResults, REQUESTS_FILE, RESULTS_FILE, type RunData } from '../report/run-data.js';
import { writeRunReports } from '../report/write-reports.js';
import { analyzeRecords } from './analysis.js';
import { prepareOutputDir } from './output-dir.js';
import { EXACT_ANALYSIS_RECORDS } from './stream-analysis.js';

/**
 * Records (lines of all the runs' requests.jsonl together) up to which `chatload merge` is exact (--max-records): the
 * same bound as a run's own exact analysis, since exact mode holds every record (~1.2 KB each, more while summarizing).
 */
export const DEFAULT_MERGE_MAX_RECORDS = EXACT_ANALYSIS_RECORDS;

/** How to merge. */
export interface MergeOptions {
  /**
   * Up to this many records in all, every record is loaded and every statistic is exact. Above it, the records are
   * streamed and the latency statistics come from merged histograms (percentiles within 0.1%): see docs/SCALING.md.
   * @default DEFAULT_MERGE_MAX_RECORDS
   */
  maxRecords?: number;
}

/** What a merge produced. */
export interface MergeResult {
  outputDir: string;
  runs: number;
  records: number;
  /** 'exact': records loaded, statistics recomputed exactly. 'histogram': records streamed, latency from histograms. */
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

/** The options the runs were made with, as far as summaries need them (goodput SLOs, warmup percentages). */
function summaryOptions(config: Record<string, unknown>) {
  const goodput = Array.isArray(config.goodput) ? config.goodput.filter((x): x is string => typeof x === 'string') : undefined;
  const warmupPercentages = Array.isArray(config.warmupPercentages) ? config.warmupPercentages.filter((x): x is number => typeof x === 'number') : undefined;
  return normalizeRunOptions({ goodput, warmupPercentages: warmupPercentages?.length ? warmupPercentages : undefined });
}

/**
 * `chatload merge DIR... -o OUT`: combines the results folders of shards (or any runs) into one results folder of
 * the same format. Up to `maxRecords` records in all: every record (on one clock), exact percentiles recomputed from
 * all of them, conversation counts summed, and the report. Above it, memory stays bounded by histograms: records are
 * streamed (twice) and never held, and latency percentiles come from the runs' merged histograms. Partial shards (no
 * results.json) merge too; the result says how many were unfinished.
 */
export async function mergeRuns(dirs: readonly string[], out: string, options: MergeOptions = {}): Promise<MergeResult> {
  if (dirs.length === 0) throw new DatasetError({ file: '(no folders)' }, 'expected at least one results folder to merge');
  const maxRecords = options.maxRecords ?? DEFAULT_MERGE_MAX_RECORDS;
  if (!Number.isSafeInteger(maxRecords) || maxRecords < 0) throw new ConfigError(`--max-records: expected a whole number >= 0, got ${maxRecords}`);
  const requestFiles: string[] = [];
  for (const dir of dirs) requestFiles.push(await requestsFileOf(dir));
  let total = 0;
  for (const file of requestFiles) total += await countJsonlLines(file);
  return total <= maxRecords ? mergeExact(dirs, out) : mergeStreaming(dirs, requestFiles, out, { total, maxRecords });
}

/** A run's requests.jsonl; the error a merge gives when the folder is not a results folder or lacks the file. */
async function requestsFileOf(dir: string): Promise<string> {
  const path = join(resolve(dir), REQUESTS_FILE);
  if (existsSync(path)) return path;
  await loadRunData(dir); // throws the precise error for a folder that is no results folder at all
  throw new DatasetError({ file: path }, 'a merge needs every run\'s requests.jsonl');
}

/** Exact mode: every record in memory, every statistic recomputed. */
async function mergeExact(dirs: readonly string[], out: string): Promise<MergeResult> {
  // Every record, not loadRunData's default sample: exact mode is bounded by --max-records instead.
  const runs: RunData[] = [];
  for (const dir of dirs) runs.push(await loadRunData(dir, { maxRecords: Number.POSITIVE_INFINITY }));
  const records = rebaseRecords(runs.flatMap((r) => r.records));
  const outputDir = prepareOutputDir(out);
  const files: MergeResult['files'] = { requests: join(outputDir, REQUESTS_FILE), results: join(outputDir, RESULTS_FILE) };
  const sink = RequestsJsonlSink.open(files.requests);
  try {
    for (const record of records) sink.write(record);
  } finally {
    sink.close();
  }
  const analysis = analyzeRecords(records, summaryOptions(runs[0]!.config));
  const conversations: Record<string, number> = {};
  for (const run of runs) for (const [key, value] of Object.entries(run.conversations)) conversations[key] = (conversations[key] ?? 0) + value;
  const unfinished = runs.filter((r) => !r.finished).length;
  const warnings = unfinished > 0 ? [`${unfinished} of the merged runs did not finish (no results.json): their records are included`] : [];
  writeJsonAtomic(
    files.results,
    buildResultsDocument({
      config: runs[0]!.config,
      summary: analysis.summary,
      warmupPercentages: analysis.warmupPercentages,
      perTurn: analysis.perTurn,
      clientHealth: null,
      conversations,
      histograms: analysis.histograms,
      extra: {
        ...runs[0]!.facts,
        merged_from: runs.map((r) => ({ dir: r.dir, finished: r.finished, records: r.records.length, shard: r.facts.shard ?? null, client_health: r.clientHealth })),
        warnings,
        conversation_stats: analysis.conversationStats,
        per_conversation: analysis.perConversation,
      },
    }),
  );
  const reports = await writeRunReports(outputDir, { html: true });
  if (reports.html !== undefined) files.html = reports.html;
  return { outputDir, runs: runs.length, records: records.length, mode: 'exact', files, warnings };
}

/** What histogram mode keeps of a run's results.json: small parts only (the rest, e.g. per_conversation, is dropped). */
interface RunResults {
  dir: string;
  finished: boolean;
  config: Record<string, unknown>;
  facts: Record<string, unknown>;
  conversations: Record<string, number>;
  clientHealth: ClientHealth | null;
  shard: unknown;
  /** results.json's `histograms` as serialized (decoded one run at a time); undefined when it has none (older or unfinished run). */
  histograms: unknown;
}

/** Keys of a run's results.json carried into the merged one, as in exact mode (facts of the first run). */
const FACT_KEYS = ['model', 'url', 'dataset', 'stop_reason', 'tokenizer', 'crashed_tasks'] as const;

function readRunResults(dir: string): RunResults {
  const path = join(resolve(dir), RESULTS_FILE);
  const empty: RunResults = { dir: resolve(dir), finished: false, config: {}, facts: {}, conversations: {}, clientHealth: null, shard: null, histograms: undefined };
  if (!existsSync(path)) return empty;
  const doc = readResults(path);
  const facts: Record<string, unknown> = {};
  for (const key of FACT_KEYS) if (doc[key] !== undefined && doc[key] !== null) facts[key] = doc[key];
  const conversations: Record<string, number> = {};
  if (isObject(doc.conversations)) for (const [k, v] of Object.entries(doc.conversations)) if (typeof v === 'number') conversations[k] = v;
  return {
    ...empty,
    finished: true,
    config: redactSecrets(isObject(doc.config) ? doc.config : {}),
    facts: redactSecrets(facts),
    conversations,
    clientHealth: isObject(doc.client_health) ? (doc.client_health as unknown as ClientHealth) : null,
    shard: doc.shard ?? null,
    histograms: doc.histograms,
  };
}

/**
 * Histogram mode. Pass 1 streams every run's records to find the common clock's t0 (the earliest start) and to build
 * the histograms of runs whose results.json has none (or whose histograms do not match their records). Pass 2
 * streams them again: each record is rebased, appended to the merged requests.jsonl in each run's file order (not
 * sorted by time, which would need them all at once), and counted into the summary's exact counters.
 */
async function mergeStreaming(dirs: readonly string[], requestFiles: readonly string[], out: string, counts: { total: number; maxRecords: number }): Promise<MergeResult> {
  const runs = dirs.map(readRunResults);
  const warnings: string[] = [
    `${counts.total} records exceed --max-records ${counts.maxRecords}: TTFT, TPOT, ITL and E2EL statistics come from the runs' merged histograms, the other statistics (tokens, TTFT by context, per turn) from histograms of the streamed records; their percentiles are within 0.1% of the exact ones, their count, mean, std, min and max are exact (summary.approximate_metrics); counts, totals, ratios, throughputs, goodput and the per-conversation table are exact`,
    'histogram merge leaves out warmup percentages other than 0%',
    'histogram merge: requests.jsonl holds every record rebased onto one clock, in each run\'s file order (not sorted by send time); report.html draws its charts from a uniform sample of the records',
  ];
  const perRun: number[] = [];
  let t0 = Number.POSITIVE_INFINITY;
  const merged = new LatencyHistograms();
  const rebuilt: string[] = [];
  for (const [i, run] of runs.entries()) {
    const stored = decodeHistograms(run, warnings);
    const built = stored === null ? new LatencyHistograms() : null;
    const seen = emptyCounts();
    let records = 0;
    await streamRecords(requestFiles[i]!, (r) => {
      records++;
      if (r.start_time_ms < t0) t0 = r.start_time_ms;
      if (built !== null) built.add(r);
      else tally(seen, r);
    });
    perRun.push(records);
    let histograms = built ?? stored!;
    if (built === null && !sameCounts(seen, histograms.counts())) {
      warnings.push(`${run.dir}: the histograms in results.json do not match its requests.jsonl; rebuilt from the records`);
      histograms = new LatencyHistograms();
      const target = histograms;
      await streamRecords(requestFiles[i]!, (r) => target.add(r));
    }
    if (built !== null) rebuilt.push(run.dir);
    merged.merge(histograms);
  }
  if (rebuilt.length > 0) warnings.push(`${rebuilt.length} of the merged runs had no usable histograms in results.json: built from their requests.jsonl`);
  const unfinished = runs.filter((r) => !r.finished).length;
  if (unfinished > 0) warnings.push(`${unfinished} of the merged runs did not finish (no results.json): their records are included`);

  const first = runs.find((r) => r.finished) ?? runs[0]!;
  const options = summaryOptions(first.config);
  const slos = options.goodput ?? {};
  const builder = new StreamingSummary({ slos, recordLatencies: false });
  const perTurn = new PerTurnTally({ slos });
  const perConversation = new ConversationTally();
  const outputDir = prepareOutputDir(out);
  const files: MergeResult['files'] = { requests: join(outputDir, REQUESTS_FILE), results: join(outputDir, RESULTS_FILE) };
  const sink = RequestsJsonlSink.open(files.requests);
  try {
    for (const file of requestFiles) {
      await streamRecords(file, (r) => {
        const rebased = rebaseRecord(r, t0);
        sink.write(rebased);
        builder.add(rebased);
        perTurn.add(rebased);
        perConversation.add(rebased);
      });
    }
  } finally {
    sink.close();
  }
  const summary = builder.summary(merged);
  const conversationSummaries = perConversation.summaries();
  // "0%" drops no record, so it is the summary itself; other percentages need the records ordered by time.
  const warmupPercentages: Record<string, Summary> = options.warmupPercentages.includes(0) ? { '0%': summary } : {};
  const conversations: Record<string, number> = {};
  for (const run of runs) for (const [key, value] of Object.entries(run.conversations)) conversations[key] = (conversations[key] ?? 0) + value;
  writeJsonAtomic(
    files.results,
    buildResultsDocument({
      config: first.config,
      summary,
      warmupPercentages,
      perTurn: perTurn.summaries(),
      clientHealth: null,
      conversations,
      histograms: merged.toJSON(),
      extra: {
        ...first.facts,
        merge_mode: 'histogram',
        merged_from: runs.map((r, i) => ({ dir: r.dir, finished: r.finished, records: perRun[i], shard: r.shard, client_health: r.clientHealth })),
        warnings,
        conversation_stats: conversationStats(conversationSummaries),
        per_conversation: conversationSummaries,
      },
    }),
  );
  // The report holds a uniform sample of the records (loadRunData's limit), so it is bounded too.
  const reports = await writeRunReports(outputDir, { html: true });
  if (reports.html !== undefined) files.html = reports.html;
  return { outputDir, runs: runs.length, records: sink.count, mode: 'histogram', files, warnings };
}

/** A run's stored histograms, or null (then built from its records): none stored, or unreadable (with a warning). */
function decodeHistograms(run: RunResults, warnings: string[]): LatencyHistograms | null {
  if (run.histograms === undefined || run.histograms === null) return null;
  try {
    return LatencyHistograms.fromJSON(run.histograms);
  } catch (error) {
    warnings.push(`${run.dir}: unreadable histograms in results.json (${(error as Error).message}); rebuilt from requests.jsonl`);
    return null;
  }
}

type MetricCounts = Record<HistogramMetric, number>;

function emptyCounts(): MetricCounts {
  return { ttft_ms: 0, tpot_ms: 0, itl_ms: 0, e2el_ms: 0 };
}

/** Counts what LatencyHistograms.add() would record, without recording it. */
function tally(counts: MetricCounts, r: RequestRecord): void {
  if (!countsInHistograms(r)) return;
  if (r.ttft_ms !== null) counts.ttft_ms++;
  if (r.tpot_ms !== null) counts.tpot_ms++;
  counts.itl_ms += r.itl_ms.length;
  counts.e2el_ms++;
}

function sameCounts(a: MetricCounts, b: MetricCounts): boolean {
  return HISTOGRAM_METRICS.every((m) => a[m] === b[m]);
}

/** Streams a run's requests.jsonl as normalized records (older files' missing fields filled, as loadRunData does). */
function streamRecords(path: string, onRecord: (record: RequestRecord) => void): Promise<number> {
  return streamRequestsJsonl(path, (record) => onRecord(normalizeRecord(record)));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
