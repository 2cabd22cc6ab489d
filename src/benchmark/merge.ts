import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, DatasetError } from '../errors/index.js';
import type { ClientHealth } from '../metrics/client-health.js';
import { sumConversationCounts, type ConversationCounts } from '../metrics/conversation-counts.js';
import type { RequestRecord } from '../metrics/record.js';
import { EXACT_ANALYSIS_RECORDS, RunAggregate, runAggregateOptions, type RecordReplay } from '../metrics/run-aggregate.js';
import { normalizeRunOptions } from '../options/run-options.js';
import { countJsonlLines, RequestsJsonlSink, streamRequestsJsonl } from '../store/requests-jsonl.js';
import { buildResultsDocument, writeJsonAtomic, type MergeFields, type ResultsConfig, type ResultsStopReason } from '../store/results-json.js';
import { readResultsFile } from '../store/results-reader.js';
import { loadRunData, normalizeRecord, REQUESTS_FILE, RESULTS_FILE } from '../store/run-data.js';
import { writeRunReports } from '../report/write-reports.js';
import { analyzeAggregate } from '../metrics/run-analysis.js';
import { runPrefixCache, semanticsText, type ExpectedCacheModelDescription, type PrefixCacheSummary, type RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import { prepareOutputDir } from '../store/output-dir.js';
import { replicaRowsFor } from '../metrics/replica-tally.js';
import type { RoutingLoss } from '../metrics/replica-types.js';
import { compareCacheCounts, type CacheHitRates } from '../server-metrics/compare.js';
import { mergeServerMetrics, type ServerMetricsPart } from '../server-metrics/merge-reports.js';
import type { ServerMetricsReport } from '../server-metrics/scraper.js';

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
  /** The prefix-cache hit rate three ways (results.json `server_metrics.cache_hit_rates`); null without merged server_metrics. */
  cacheHitRates: CacheHitRates | null;
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
  let merged: MergedRecords;
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
  const server = mergeServerMetrics(serverMetricsParts(runs, merged.clocks), runs.length);
  const serverMetrics = server.report === null ? null : compareCacheCounts(server.report, analysis.summary);
  warnings.push(...server.warnings);
  if (runs.some((r) => r.gpu)) warnings.push("gpu: each run's GPU section covers its own scrapes and is not merged: see each run's results.json");
  for (const warning of [mixedEnginesWarning(runs), semanticsWarning(runs)]) if (warning !== undefined) warnings.push(warning);
  const finished = runs.filter((r) => r.finished);
  writeJsonAtomic(
    files.results,
    buildResultsDocument({
      // A run's options as results.json recorded them (a RunOptionsInput, checked as an object by the reader).
      config: first.config as ResultsConfig,
      summary: analysis.summary,
      warmupPercentages: analysis.warmupPercentages,
      perTurn: analysis.perTurn,
      clientHealth: null,
      conversations: sumConversationCounts(runs.flatMap((r) => (r.conversations === null ? [] : [r.conversations]))),
      histograms: analysis.histograms,
      peaks: analysis.peaks,
      extra: {
        ...first.facts,
        // What a run states, so that a merge of merges reads it back (results-reader.ts).
        token_counts_exact: finished.length > 0 && finished.every((r) => r.tokenCountsExact),
        ...(mode === 'histogram' ? { merge_mode: 'histogram' } : {}),
        merged_from: runs.map((r, i) => ({ dir: r.dir, finished: r.finished, records: merged.perRun[i], shard: r.shard, client_health: r.clientHealth })),
        warnings,
        ...mergedPrefixCache(runs, analysis.prefixCache, analysis.routing),
        conversation_stats: analysis.conversationStats,
        agentic: analysis.agentic,
        per_conversation: analysis.perConversation,
        // Rebuilt from the records, as a run builds them (issue #31).
        replicas: analysis.replicas.length > 0 ? replicaRowsFor(analysis.replicas, runs.every((r) => r.comparable)) : null,
        server_metrics: serverMetrics,
      },
    }),
  );
  // Past REPORT_MAX_RECORDS the report holds a uniform sample of the records (loadRunData's limit), so it is bounded too.
  const reports = await writeRunReports(outputDir, { html: true });
  if (reports.html !== undefined) files.html = reports.html;
  return { outputDir, runs: runs.length, records: aggregate.records, mode, files, warnings, cacheHitRates: serverMetrics?.cache_hit_rates ?? null };
}

/** A run's requests.jsonl; the error a merge gives when the folder is not a results folder or lacks the file. */
async function requestsFileOf(dir: string): Promise<string> {
  const path = join(resolve(dir), REQUESTS_FILE);
  if (existsSync(path)) return path;
  await loadRunData(dir); // throws the precise error for a folder that is no results folder at all
  throw new DatasetError({ file: path }, 'a merge needs every run\'s requests.jsonl');
}

/** Where each run's clock began, and its records' span, as the merge puts its records on one clock (rebaseRecord). */
class RunClocks {
  /** Each run's clock zero on the wall clock (a record's start_time_ms less its sent_at_ms), its first send and its last end, ms. */
  readonly #runs: Array<{ zero: number; first: number; last: number } | undefined> = [];
  /** The merge's clock zero on the wall clock: the earliest start of all records (rebaseRecord's t0). */
  #t0 = Number.POSITIVE_INFINITY;

  get t0(): number {
    return this.#t0;
  }

  see(run: number, r: RequestRecord): void {
    const zero = r.start_time_ms - r.sent_at_ms;
    const seen = (this.#runs[run] ??= { zero, first: r.sent_at_ms, last: r.done_at_ms });
    seen.zero = Math.min(seen.zero, zero);
    seen.first = Math.min(seen.first, r.sent_at_ms);
    seen.last = Math.max(seen.last, r.done_at_ms);
    this.#t0 = Math.min(this.#t0, r.start_time_ms);
  }

  /** Run `run` on the merge's clock: when its clock began, its first send and its last end, ms (all 0 without records). */
  span(run: number): { offsetMs: number; startMs: number; endMs: number } {
    const seen = this.#runs[run];
    if (seen === undefined || !Number.isFinite(this.#t0)) return { offsetMs: 0, startMs: 0, endMs: 0 };
    const offsetMs = seen.zero - this.#t0;
    return { offsetMs, startMs: offsetMs + seen.first, endMs: offsetMs + seen.last };
  }
}

/** What merging the records gave: each run's count, a replay of the merged records, and where each run's clock began. */
interface MergedRecords {
  perRun: number[];
  replay: RecordReplay;
  clocks: RunClocks;
}

/** Exact mode: every record held, rebased, sorted by send time, then written and aggregated in that order. */
async function mergeHeld(requestFiles: readonly string[], write: (r: RequestRecord) => void): Promise<MergedRecords> {
  const all: RequestRecord[] = [];
  const perRun: number[] = [];
  const clocks = new RunClocks();
  for (const [i, file] of requestFiles.entries()) {
    perRun.push(
      await streamRecords(file, (r) => {
        clocks.see(i, r);
        all.push(r);
      }),
    );
  }
  const records = rebaseRecords(all);
  for (const r of records) write(r);
  return {
    perRun,
    clocks,
    replay: async (visit) => {
      for (const r of records) visit(r);
    },
  };
}

/**
 * Histogram mode, records never held: pass 1 finds the common clock's t0 (the earliest start), pass 2 rebases each
 * record and writes it in each run's file order (sorting would need them all at once). The replay streams them again.
 */
async function mergeStreamed(requestFiles: readonly string[], write: (r: RequestRecord) => void): Promise<MergedRecords> {
  const perRun: number[] = [];
  const clocks = new RunClocks();
  for (const [i, file] of requestFiles.entries()) perRun.push(await streamRecords(file, (r) => clocks.see(i, r)));
  const t0 = clocks.t0;
  const each = async (visit: (r: RequestRecord) => void): Promise<void> => {
    for (const file of requestFiles) await streamRecords(file, (r) => visit(rebaseRecord(r, t0)));
  };
  await each(write);
  return { perRun, replay: each, clocks };
}

/** What a merge keeps of a run's results.json: small parts only (the rest, e.g. per_conversation, comes from the records). */
interface RunResults {
  dir: string;
  finished: boolean;
  config: Record<string, unknown>;
  /** The facts a merged results.json carries from its first finished run. */
  facts: Omit<MergeFields, 'merge_mode' | 'merged_from' | 'prefix_cache' | 'replicas' | 'token_counts_exact'>;
  /** The load's conversation counts; null when unknown (no results.json). */
  conversations: Partial<ConversationCounts> | null;
  clientHealth: ClientHealth | null;
  shard: string | null;
  /** Its `prefix_cache.model` (null when absent), and whether its token counts were exact. */
  prefixCacheModel: ExpectedCacheModelDescription | null;
  tokenCountsExact: boolean;
  /** False when the run's expected-cache model was not comparable with the server's counts (prefix_cache.comparable). */
  comparable: boolean;
  /** Its `server_metrics` (--scrape-metrics); null when absent. */
  serverMetrics: ServerMetricsReport | null;
  /** Whether it had a `gpu` section (not merged: a warning says so). */
  gpu: boolean;
}

/** The runs' server_metrics, each placed on the merge's clock. */
function serverMetricsParts(runs: readonly RunResults[], clocks: RunClocks): ServerMetricsPart[] {
  return runs.flatMap((r, i) => (r.serverMetrics === null ? [] : [{ dir: r.dir, report: r.serverMetrics, ...clocks.span(i) }]));
}

/**
 * The merged `prefix_cache`, from the merged records and the first finished run's model: each shard's process had its
 * own expected-cache index (a model cannot be shared across machines), so with more than one run merged the scope is
 * `per-shard` and its note says what the figure means (docs/SCALING.md). Absent when no run had one. `routing`: the
 * loss to routing rebuilt from the merged records (each record's figures are its own run's), when they named replicas.
 */
function mergedPrefixCache(runs: readonly RunResults[], tally: PrefixCacheSummary, routing: RoutingLoss | null): { prefix_cache?: RunPrefixCache } {
  const first = runs.find((r) => r.prefixCacheModel !== null);
  if (first === undefined) return {};
  const model: ExpectedCacheModelDescription = { ...first.prefixCacheModel! };
  if (runs.length > 1) {
    model.scope = 'per-shard';
    model.scope_note = `${runs.length} runs merged, each with its own expected-cache index: a request's expected cached tokens count what its own run had sent, not prefixes another run sent first (a shared system prompt is expected once per run); the server's cache is one, so efficiency can exceed 1 there`;
  }
  // Exact only when every run's model counted exactly: one approximate shard makes the sum approximate.
  const merged = runPrefixCache(tally, model, runs.every((r) => r.prefixCacheModel === null || r.tokenCountsExact));
  return { prefix_cache: routing === null ? merged : { ...merged, routing } };
}

/**
 * Each run's `textOf` as "dir: text" when the runs that have one do not all agree, joined; undefined when they agree.
 * The merge's warnings of runs that differ (cache semantics, engine).
 */
function whereRunsDiffer(runs: readonly RunResults[], textOf: (r: RunResults) => string | undefined): string | undefined {
  const texts = runs.flatMap((r) => {
    const text = textOf(r);
    return text === undefined ? [] : [{ dir: r.dir, text }];
  });
  if (new Set(texts.map((t) => t.text)).size <= 1) return undefined;
  return texts.map((t) => `${t.dir}: ${t.text}`).join('; ');
}

/**
 * Runs whose expected-cache models ran different cache semantics (shards of different chatload versions, or against
 * different engines): the merged prefix_cache states the first's, so the merged expected figure mixes rules.
 */
function semanticsWarning(runs: readonly RunResults[]): string | undefined {
  const each = whereRunsDiffer(runs, (r) => (r.prefixCacheModel?.semantics === undefined ? undefined : semanticsText(r.prefixCacheModel)));
  return each === undefined ? undefined : `the runs' expected-cache models ran different cache semantics (${each}): prefix_cache.model states the first's, and the merged expected figures mix the rules`;
}

/** Runs against different engines (shards pointed at different servers): results.json's `engine` states the first's. */
function mixedEnginesWarning(runs: readonly RunResults[]): string | undefined {
  const each = whereRunsDiffer(runs, ({ facts: { engine } }) => (engine === undefined ? undefined : `${engine.name}${engine.version === null ? '' : ` ${engine.version}`}`));
  return each === undefined ? undefined : `the runs were against different engines (${each}): engine states the first's`;
}

function readRunResults(dir: string): RunResults {
  const path = join(resolve(dir), RESULTS_FILE);
  const empty: RunResults = { dir: resolve(dir), finished: false, config: {}, facts: {}, conversations: null, clientHealth: null, shard: null, prefixCacheModel: null, tokenCountsExact: false, comparable: true, serverMetrics: null, gpu: false };
  if (!existsSync(path)) return empty;
  const stored = readResultsFile(path);
  const { model, url, dataset, stop_reason, tokenizer, crashed_tasks, engine } = stored.facts;
  const facts = { model, url, dataset, stop_reason: stop_reason as ResultsStopReason | undefined, tokenizer, crashed_tasks, engine };
  return {
    ...empty,
    finished: true,
    config: stored.config,
    facts: Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined)),
    conversations: stored.conversations,
    clientHealth: stored.clientHealth,
    shard: stored.shard,
    prefixCacheModel: stored.prefixCache?.model ?? null,
    tokenCountsExact: stored.tokenCountsExact,
    comparable: stored.prefixCache?.comparable !== false,
    serverMetrics: stored.serverMetrics,
    gpu: stored.gpu !== null,
  };
}

/** Streams a run's requests.jsonl as normalized records (older files' missing fields filled, as loadRunData does). */
function streamRecords(path: string, onRecord: (record: RequestRecord) => void): Promise<number> {
  return streamRequestsJsonl(path, (record) => onRecord(normalizeRecord(record)));
}
