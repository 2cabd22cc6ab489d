import { replicaRowsFromPages } from '../server-metrics/replica-pages.js';
import { replicaRowsFor, type ReplicaRow } from '../metrics/replica-tally.js';
import { join, relative, resolve } from 'node:path';
import { runPrefixCacheOf } from '../cache-model/setup.js';
import type { LoadResult } from '../load/types.js';
import { ExitCode, OutputError } from '../errors/index.js';
import type { ClientHealth } from '../metrics/client-health.js';
import type { ErrorCount, ErrorTally } from '../metrics/error-tally.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import type { RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import { scheduleWarning, type RunAnalysis } from '../metrics/run-analysis.js';
import type { Summary } from '../metrics/summary.js';
import type { RunOptionsInput } from '../options/run-options.js';
import { isRunPlan, planRun, type RunPlan } from '../options/run-plan.js';
import { writeConversationsJson } from '../report/conversations-json.js';
import { writeReferenceStatsFile } from '../report/stats-json.js';
import { writeRunReports } from '../report/write-reports.js';
import type { LlmdReportInput } from '../report/llmd-report.js';
import { writeTextAtomic } from '../store/atomic-write.js';
import { chatloadVersion } from '../util/version.js';
import { randomUUID } from 'node:crypto';
import type { EngineInfo } from '../server-engine/detect.js';
import { compareCacheCounts } from '../server-metrics/compare.js';
import type { ServerMetricsReport } from '../server-metrics/scraper.js';
import { describeFsError } from '../store/output-dir.js';
import { REDACTED, redactSecrets } from '../store/redact.js';
import { buildResultsDocument, type ResultsDocument, type ResultsConfig } from '../store/results-json.js';
import { writtenResults } from '../store/results-reader.js';
import { resumedCounts } from './resume.js';
import { connectAndProbe, prepareRun, runLoadAndScrape, type BenchmarkHooks, type BenchmarkStartInfo, type ConnectedRun, type LoadOutcome, type PreparedRun, type RunResources } from './run-steps.js';
import { requestsHeld } from '../load/active-conversation.js';
import { observerWithMetrics, withLiveMetrics } from './live-metrics-hooks.js';
import { gpuResults } from '../server-metrics/gpu-figures.js';
import type { GpuResults } from '../metrics/gpu-types.js';
import { engineWarning } from './engine-habits.js';

export type { BenchmarkHooks, BenchmarkStartInfo } from './run-steps.js';

/** Everything a finished run produced. The files are already on disk. */
export interface BenchmarkResult {
  /** The validated plan the run followed. */
  plan: RunPlan;
  outputDir: string;
  files: { requests: string; results: string; statsJson?: string; conversations?: string; llmdReport?: string; html?: string; excel?: string; csv?: string };
  model: string;
  /** The server's URL, credentials redacted. */
  url: string;
  /** The serving engine detected behind the URL (results.json `engine`). */
  serverEngine: EngineInfo;
  summary: Summary;
  warmupPercentages: Record<string, Summary>;
  perTurn: TurnSummary[];
  /** Actual against expected cached tokens (results.json `prefix_cache`), and which expected-cache model ran. */
  prefixCache: RunPrefixCache;
  /** One row per replica behind a router (results.json `replicas`): by response header, or by /metrics deltas; null when unknown. */
  replicas: ReplicaRow[] | null;
  clientHealth: ClientHealth;
  /** What --scrape-metrics read from the server's /metrics; null without it. */
  serverMetrics: ServerMetricsReport | null;
  /** GPU power, utilisation and energy from a dcgm-exporter page among --scrape-metrics (results.json `gpu`); null without one. */
  gpu: GpuResults | null;
  /** How the load ran: why it stopped, how every conversation ended, the load model's line. */
  load: LoadResult;
  /** Run-level warnings beyond the load's (server refusals, coordinated omission). */
  warnings: string[];
  /** The most frequent distinct error messages (at most 3), warmup included: why a run failed. */
  topErrors: ErrorCount[];
  /** 0 ok, 1 errors over --max-error-rate (requests cut by the run's stop not counted) or nothing succeeded, 130 interrupted. */
  exitCode: number;
}

/**
 * The options as results.json shows them: secrets replaced (redactSecrets also covers URL passwords), and every
 * --header value hidden, since any header may carry a credential.
 */
function publicConfig(config: Readonly<Record<string, unknown>>): ResultsConfig {
  const headers = Array.isArray(config.headers) ? (config.headers as string[]) : [];
  // The plan's config holds the options as given (a RunOptionsInput) with their defaults (checkRunOptions).
  return redactSecrets<ResultsConfig>({
    ...config,
    apiKey: config.apiKey === undefined ? undefined : REDACTED,
    // Names only: a header's value may be a secret, in either "Name: value" or "Name=value" form.
    headers: headers.map((line) => `${line.split(/[:=]/)[0]!.trim()}: ${REDACTED}`),
  });
}

function exitCodeOf(load: LoadResult, summary: Summary, maxErrorRate: number, outcomes: ErrorTally): number {
  if (load.stopReason === 'interrupted') return ExitCode.interrupted;
  // Nothing succeeded, warmup included (a wrong model, a dead route): the run measured nothing, whatever the rate.
  if (outcomes.failed > 0 && outcomes.ok === 0) return ExitCode.runFailed;
  // Requests cut by the run's own stop (--benchmark-timeout-sec) are not the server's errors.
  const failed = summary.failed - summary.failed_by_kind.aborted;
  const total = summary.completed + failed;
  return total > 0 && failed / total > maxErrorRate ? ExitCode.runFailed : ExitCode.ok;
}

/**
 * Runs one benchmark end to end, in named steps (run-steps.ts): prepare (dataset, output folder) → connect and probe
 * (the embedded simulator when there is no --url, readiness, engine, model, expected-cache model) → run the load
 * (records appended to requests.jsonl as they end, through the Recorder) → finalize (summaries, prefix cache,
 * warnings) → write results.json and the other files. Bad input throws a ChatloadError before anything is sent; after
 * that, nothing that was measured is lost.
 */
export async function runBenchmark(input: RunOptionsInput | RunPlan, given: BenchmarkHooks = {}): Promise<BenchmarkResult> {
  const plan = isRunPlan(input) ? input : planRun(input);
  // --metrics-port: listening before any work (a port in use is bad input); the caller's when it serves several runs.
  const live = await withLiveMetrics(plan.outputs.metricsPort, given);
  const hooks = { ...live.hooks, observer: observerWithMetrics(live.hooks.observer, live.hooks.liveMetrics) };
  try {
    return await runMeasured(plan, hooks);
  } finally {
    await live.close();
  }
}

/** runBenchmark's steps, its hooks' observer telling the live metrics too. */
async function runMeasured(plan: RunPlan, hooks: BenchmarkHooks): Promise<BenchmarkResult> {
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    hooks.observer?.onWarning?.(message);
  };
  for (const note of plan.notes) warn(note);
  const prepared = await prepareRun(plan, hooks, warn);
  const open: RunResources = {};
  try {
    const connected = await connectAndProbe(plan, prepared, hooks, warn, open);
    hooks.onStart?.(startInfo(plan, prepared, connected, open.simulator !== undefined));
    const ran = await runLoadAndScrape(plan, prepared, connected, hooks, warn);
    const analysis = await ran.recorder.analysis();
    for (const w of analysis.warnings) warn(w);
    const modelled = runPrefixCacheOf(ran.cacheModel, analysis.prefixCache, analysis.summary, plan.target.resetPrefixCache, warn);
    // Present only when a response header named the replicas (issue #31).
    const prefixCache = analysis.routing === null ? modelled : { ...modelled, routing: analysis.routing };
    const byHeader = analysis.replicas.length > 0 ? replicaRowsFor(analysis.replicas, modelled.comparable !== false) : null;
    const replicas = byHeader ?? (ran.metricsPages === undefined ? null : replicaRowsFromPages(ran.metricsPages));
    // A resumed run's summary counts the interrupted run's tokens too, whose energy no scrape measured.
    const gpu = gpuResults(ran.gpuPages, plan.target.scrapeIntervalMs, prepared.resumed === undefined ? analysis.summary.total_output_tokens : null);
    for (const w of gpu?.warnings ?? []) warn(w);
    for (const w of [scheduleWarning(analysis.summary), engineWarning(connected.probe, analysis.summary)]) if (w !== undefined) warn(w);
    ran.load.workerHealth?.forEach((h, i) => {
      for (const w of h?.warnings ?? []) warn(`worker ${i}: ${w}`);
    });
    const files = await writeRunFiles({ plan, prepared, connected, ran, analysis, prefixCache, replicas, gpu, warnings, embeddedSimulator: open.simulator !== undefined, llmdStage: hooks.llmdStage ?? 0 });
    const { summary, warmupPercentages, perTurn } = analysis;
    const outcomes = ran.recorder.outcomes;
    return {
      plan,
      outputDir: prepared.outputDir,
      files,
      model: connected.model,
      url: connected.shownUrl,
      serverEngine: connected.probe.engine,
      summary,
      warmupPercentages,
      perTurn,
      prefixCache,
      replicas,
      clientHealth: ran.clientHealth,
      serverMetrics: ran.serverMetrics ?? null,
      gpu,
      load: ran.load,
      warnings,
      topErrors: outcomes.top(3),
      exitCode: exitCodeOf(ran.load, summary, plan.summary.maxErrorRate, outcomes),
    };
  } finally {
    prepared.releaseOutputDir();
    await open.client?.close();
    await open.simulator?.close();
  }
}

/** What is about to run, for hooks.onStart. */
function startInfo(plan: RunPlan, prepared: PreparedRun, connected: ConnectedRun, embeddedSimulator: boolean): BenchmarkStartInfo {
  const { dataset, resumed, maxRequests } = prepared;
  return {
    url: connected.shownUrl,
    embeddedSimulator,
    model: connected.model,
    engine: connected.probe.engine,
    dataset: dataset.source,
    conversations: dataset.conversations.length,
    requests: resumed !== undefined ? resumed.maxNumRequests : Math.min(maxRequests ?? Infinity, requestsHeld(dataset.conversations, plan.load.maxTurns)),
    durationMs: plan.deadlines.durationMs,
    outputDir: prepared.outputDir,
    load: loadLine(plan, dataset.traced === true),
  };
}

/**
 * The load as the start line says it, with where a defaulted -p came from (issue #34: a first run against a server
 * took 4 min 22 s at -p 1, the default, with no hint).
 */
function loadLine(plan: RunPlan, traced: boolean): string {
  const { model, trace } = plan.load;
  if (traced) return `the trace's timestamps${trace.speed === 1 ? '' : ` at ${trace.speed}x (--trace-speed)`}${trace.maxConcurrency === undefined ? '' : `, --max-concurrency ${trace.maxConcurrency}`}`;
  if (model.type === 'open-sessions') {
    const { ratePerSec, rampUp } = model.arrivals;
    const cap = model.maxConcurrency === undefined ? '' : ` --max-concurrency ${model.maxConcurrency}`;
    return `${rampUp === undefined ? `--session-rate ${ratePerSec}` : `--ramp-up linear:${rampUp.startPerSec}:${ratePerSec}:${rampUp.seconds}`}${cap}`;
  }
  const flags = `-p ${model.numClients} -k ${model.maxActiveConversations}`;
  if (!plan.defaulted.includes('numClients')) return flags;
  const demo = plan.target.url === undefined && plan.dataset.inputFile === undefined;
  return `${flags} (${demo ? "the built-in demo's default; -p sets it" : `-p's default ${plan.target.url === undefined ? 'with -i' : 'against --url'}; the built-in demo uses 16`})`;
}

/** Everything the last step writes from. */
interface RunFilesInput {
  plan: RunPlan;
  prepared: PreparedRun;
  connected: ConnectedRun;
  ran: LoadOutcome;
  analysis: RunAnalysis;
  prefixCache: RunPrefixCache;
  replicas: ReplicaRow[] | null;
  gpu: GpuResults | null;
  warnings: string[];
  embeddedSimulator: boolean;
  /** --llmd-report's `stage`: a sweep's point index, else 0. */
  llmdStage: number;
}

/**
 * results.json (atomically; a failed write of requests.jsonl is thrown after it, with the records it lost), then the
 * reference's stats JSON, the -o conversations, and the reports, rendered as `chatload report` would from the files
 * just written (results.json from the text just written, not read back).
 */
async function writeRunFiles(input: RunFilesInput): Promise<BenchmarkResult['files']> {
  const { plan, prepared, ran } = input;
  const { outputDir } = prepared;
  const files: BenchmarkResult['files'] = { requests: join(outputDir, 'requests.jsonl'), results: join(outputDir, 'results.json') };
  // Written as writeJsonAtomic writes it; the same text is handed to the reports below, not read back (writtenResults).
  let resultsText: string;
  try {
    resultsText = `${JSON.stringify(resultsDocument(input), null, 2)}\n`;
    writeTextAtomic(files.results, resultsText);
  } catch (error) {
    // The first failure is the cause to name, with the lost_records count in its message; results.json's own failure
    // is said on the same line (RELIABILITY.md: nothing fails unsaid).
    if (ran.outputError !== undefined) throw ran.outputError.alsoNot(files.results, describeFsError(error));
    throw new OutputError(files.results, describeFsError(error), undefined, { cause: error });
  }
  if (ran.outputError !== undefined) throw ran.outputError;
  const { statsJsonOutput, outputFile } = plan.outputs;
  if (statsJsonOutput !== undefined) {
    files.statsJson = statsJsonOutput;
    await writeReferenceStatsFile(statsJsonOutput, files.requests);
  }
  if (outputFile !== undefined) {
    files.conversations = outputFile;
    writeConversationsJson(outputFile, ran.load.finishedConversations);
  }
  if (plan.outputs.llmdReport !== undefined) {
    files.llmdReport = plan.outputs.llmdReport;
    // Redacted as results.json is: its config through publicConfig, the URL as shown (no document-wide pass: a key-name
    // redaction would take `time_to_first_token` for a credential).
    // Loaded only when asked for: code every other run would load at start for nothing.
    const { llmdReportDocument, llmdReportText } = await import('../report/llmd-report.js');
    writeTextAtomic(files.llmdReport, llmdReportText(llmdReportDocument(llmdReportInput(input))));
  }
  const written = writtenResults(resolve(files.results), resultsText);
  const reports = await writeRunReports(outputDir, { html: plan.outputs.report, excel: plan.outputs.excel, csv: plan.outputs.csv }, written);
  // Named as the output folder was given (relative stays relative), like the other files.
  const asGiven = (path: string): string => (path.startsWith(resolve(outputDir)) ? join(outputDir, relative(resolve(outputDir), path)) : path);
  if (reports.html !== undefined) files.html = asGiven(reports.html);
  if (reports.excel !== undefined) files.excel = asGiven(reports.excel);
  if (reports.csv !== undefined) files.csv = asGiven(reports.csv);
  return files;
}

/**
 * --llmd-report's figures (report/llmd-report.ts): the run's, the server's, and what llm-d-benchmark's harness pod
 * says of the experiment in its environment (LLMDBENCH_RUN_EXPERIMENT_ID, LLMDBENCH_DESCRIPTION_TEXT and
 * LLMDBENCH_DESCRIPTION_KEYWORDS, read as llm-d's converters read them).
 */
function llmdReportInput(input: RunFilesInput): LlmdReportInput {
  const { plan, prepared, connected, ran, analysis } = input;
  const env = (name: string): string | undefined => process.env[name]?.trim() || undefined;
  const keywords = env('LLMDBENCH_DESCRIPTION_KEYWORDS')?.split(',').map((k) => k.trim()).filter((k) => k !== '');
  const { engine } = connected.probe;
  return {
    uid: randomUUID(),
    summary: analysis.summary,
    perConversation: analysis.perConversation,
    conversations: { ...resumedCounts(ran.load.conversations, prepared.resumed) },
    config: publicConfig(plan.config),
    load: prepared.load,
    dataset: { source: prepared.dataset.source, traced: prepared.dataset.traced === true },
    server: { engine: engine.name, version: engine.version, url: input.embeddedSimulator ? 'embedded simulator' : connected.shownUrl, model: connected.model },
    chatloadVersion: chatloadVersion(),
    time: { startMs: ran.endedAtMs - ran.clientHealth.wall_ms, endMs: ran.endedAtMs },
    parts: plan.scale.shard?.count ?? 1,
    stage: input.llmdStage,
    experiment: { id: env('LLMDBENCH_RUN_EXPERIMENT_ID'), description: env('LLMDBENCH_DESCRIPTION_TEXT'), keywords },
  };
}

/** results.json's document. */
function resultsDocument(input: RunFilesInput): ResultsDocument {
  const { plan, prepared, connected, ran, analysis, prefixCache, replicas } = input;
  const { load, outputError } = ran;
  const { shard } = plan.scale;
  const { counter } = prepared;
  const { cacheModel } = connected;
  return buildResultsDocument({
    config: publicConfig(plan.config),
    summary: analysis.summary,
    warmupPercentages: analysis.warmupPercentages,
    perTurn: analysis.perTurn,
    clientHealth: ran.clientHealth,
    conversations: resumedCounts(load.conversations, prepared.resumed),
    histograms: analysis.histograms,
    peaks: analysis.peaks,
    percentileMetrics: plan.summary.percentileMetrics,
    extra: {
      // Which options were defaults, not given: the reports show options as the user gave them (issue #34).
      defaulted_options: [...plan.defaulted],
      model: connected.model,
      engine: connected.probe.engine,
      url: input.embeddedSimulator ? 'embedded simulator' : connected.shownUrl,
      dataset: prepared.dataset.source,
      load_model: load.loadModel,
      workers: connected.workers,
      worker_health: load.workerHealth ?? null,
      shard: shard === undefined ? null : `${shard.index}/${shard.count}`,
      stop_reason: outputError === undefined ? load.stopReason : 'output_error',
      lost_records: outputError?.lostRecords ?? 0,
      tokenizer: cacheModel.tokenizer ?? counter.source ?? counter.tokenizer.name,
      token_counts_exact: cacheModel.exact,
      dataset_image_parts: prepared.imageParts,
      dataset_audio_parts: prepared.audioParts,
      warnings: [...load.warnings, ...input.warnings],
      crashed_tasks: load.crashedTasks,
      top_errors: ran.recorder.outcomes.top(10),
      invalid_usage: Object.fromEntries(ran.recorder.invalidUsage),
      conversation_stats: analysis.conversationStats,
      agentic: analysis.agentic,
      per_conversation: analysis.perConversation,
      prefix_cache: prefixCache,
      replicas,
      server_metrics: ran.serverMetrics === undefined ? null : compareCacheCounts(ran.serverMetrics, analysis.summary),
      gpu: input.gpu,
    },
  });
}
