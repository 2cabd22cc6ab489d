import { join, relative, resolve } from 'node:path';
import { ChatClient, type ModelInfo } from '../client/chat-client.js';
import { chatClientOptionsFor } from '../client/from-run-options.js';
import { demoConversations } from '../conversation/demo.js';
import { loadDataset } from '../conversation/load.js';
import type { Conversation } from '../conversation/types.js';
import { runEngine } from '../engine/engine.js';
import { runEngineInWorkers } from '../engine/workers/run-in-workers.js';
import { workerCount } from '../engine/workers/worker-count.js';
import type { EngineObserver, EngineResult } from '../engine/types.js';
import { ExitCode } from '../errors/index.js';
import { ClientHealthMonitor, type ClientHealth } from '../metrics/client-health.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import type { RequestRecord } from '../metrics/record.js';
import { RunAggregate, runAggregateOptions, type SerializedRunAggregate } from '../metrics/run-aggregate.js';
import type { Summary } from '../metrics/summary.js';
import { MetricsScraper, type ServerMetricsReport } from '../server-metrics/scraper.js';
import { compareCacheCounts, scrapeUrl } from '../server-metrics/compare.js';
import { analyzeAggregate, analyzeRecordsFile, scheduleWarning, type RunAnalysis } from './analysis.js';
import { normalizeRunOptions, parseStartAt, type RunOptions, type RunOptionsInput } from '../options/run-options.js';
import { parseShard, RequestBudget, shareOf } from '../engine/partition.js';
import { StopController } from '../engine/stop.js';
import { writeConversationsJson } from '../report/conversations-json.js';
import { REDACTED, redactSecrets } from '../report/redact.js';
import { RequestsJsonlSink, streamRequestsJsonl } from '../report/requests-jsonl.js';
import { buildResultsDocument, writeJsonAtomic } from '../report/results-json.js';
import { writeReferenceStatsFile } from '../report/stats-json.js';
import { writeRunReports } from '../report/write-reports.js';
import { startSimulatorWorker, type RunningSimulator } from '../sim/index.js';
import type { TokenCounter } from '../tokenizer/index.js';
import { resolveTokenCounter } from '../tokenizer/resolve.js';
import { datasetStats, formatStats } from '../synth/dataset-stats.js';
import { thinkTimeFromOptions } from '../engine/think-time.js';
import { parseHeaders } from './headers.js';
import { defaultOutputDir, prepareOutputDir } from './output-dir.js';

/** Hooks of a benchmark run: an observer for live output, a stop signal, and a notice of what is about to run. */
export interface BenchmarkHooks {
  observer?: EngineObserver;
  /** Aborting it stops the run gracefully, as SIGINT does. */
  signal?: AbortSignal;
  /** Called once the server is ready, before the first request. */
  onStart?(info: BenchmarkStartInfo): void;
  /** A generation config with `print_stats`: the dataset's distributions as text, to print. */
  onDatasetStats?(text: string): void;
}

/** What is about to run. */
export interface BenchmarkStartInfo {
  url: string;
  /** True when chatload started its own simulator (no --url). */
  embeddedSimulator: boolean;
  model: string;
  dataset: string;
  conversations: number;
  outputDir: string;
}

/** Everything a finished run produced. The files are already on disk. */
export interface BenchmarkResult {
  options: RunOptions;
  outputDir: string;
  files: { requests: string; results: string; statsJson?: string; conversations?: string; html?: string; excel?: string; csv?: string };
  model: string;
  url: string;
  summary: Summary;
  warmupPercentages: Record<string, Summary>;
  perTurn: TurnSummary[];
  clientHealth: ClientHealth;
  /** What --scrape-metrics read from the server's /metrics; null without it. */
  serverMetrics: ServerMetricsReport | null;
  engine: EngineResult;
  /** Run-level warnings beyond the engine's (server refusals, coordinated omission). */
  warnings: string[];
  /** 0 ok, 1 errors over --max-error-rate, 130 interrupted. */
  exitCode: number;
}

/** The run's dataset: the -i file (conversations, JSONL, ShareGPT, or a generation config generated in memory) or the demo. */
async function loadRunDataset(
  options: RunOptions,
  counter: TokenCounter,
  warn: (message: string) => void,
): Promise<{ conversations: Conversation[]; source: string; stats?: string }> {
  if (options.inputFile === undefined) return { conversations: demoConversations({ seed: options.seed }), source: 'built-in demo' };
  const loaded = await loadDataset(options.inputFile, { seed: options.seed, counter, warn });
  const stats = loaded.printStats ? formatStats(datasetStats(loaded.conversations, counter.tokenizer)) : undefined;
  return { conversations: loaded.conversations, source: options.inputFile, stats };
}

/**
 * The options as results.json shows them: secrets replaced (redactSecrets also covers URL passwords), and every
 * --header value hidden, since any header may carry a credential.
 */
function publicConfig(options: RunOptions): Record<string, unknown> {
  return redactSecrets({
    ...options,
    apiKey: options.apiKey === undefined ? undefined : REDACTED,
    headers: options.headers.map((line) => `${line.slice(0, line.indexOf(':'))}: ${REDACTED}`),
  });
}

function exitCodeOf(engine: EngineResult, summary: Summary, maxErrorRate: number): number {
  if (engine.stopReason === 'interrupted') return ExitCode.interrupted;
  const total = summary.completed + summary.failed;
  return total > 0 && summary.failed / total > maxErrorRate ? ExitCode.runFailed : ExitCode.ok;
}

/**
 * The run's analysis from the aggregate recorded during the run (requests.jsonl is read again only for warmup
 * percentages above 0 past the aggregate's exact limits). With worker threads, from the parts' aggregates; if a part
 * died with its aggregate, from requests.jsonl, which holds every record it sent before dying.
 */
async function analyzeRun(
  aggregate: RunAggregate,
  parts: Array<SerializedRunAggregate | undefined> | undefined,
  requestsFile: string,
  options: RunOptions,
  warn: (message: string) => void,
): Promise<RunAnalysis> {
  if (parts !== undefined) {
    if (parts.some((p) => p === undefined)) {
      warn('a worker thread died without its aggregate: the summaries were computed from requests.jsonl instead');
      return analyzeRecordsFile(requestsFile, options);
    }
    for (const part of parts) aggregate.merge(RunAggregate.fromJSON(part));
  }
  return analyzeAggregate(aggregate, (visit) => streamRequestsJsonl(requestsFile, visit));
}

/**
 * Runs one benchmark end to end: dataset → (embedded simulator when there is no --url) → readiness → engine →
 * records (appended to requests.jsonl as they end) → summaries → results.json and the other files.
 * Bad input throws a ChatloadError before anything is sent; after that, nothing that was measured is lost.
 */
export async function runBenchmark(input: RunOptionsInput, hooks: BenchmarkHooks = {}): Promise<BenchmarkResult> {
  const options = normalizeRunOptions(input);
  const headers = parseHeaders(options.headers);
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    hooks.observer?.onWarning?.(message);
  };
  const counter = await resolveTokenCounter({ tokenizer: options.tokenizer, model: options.model, trustRemoteCode: options.trustRemoteCode, warn });
  const dataset = await loadRunDataset(options, counter, warn);
  if (dataset.stats !== undefined) hooks.onDatasetStats?.(dataset.stats);
  // A shard runs its share of the whole: the conversations it owns and its exact share of -n.
  const shard = options.shard === undefined ? undefined : parseShard(options.shard);
  const maxRequests = options.maxNumRequests === undefined || shard === undefined ? options.maxNumRequests : shareOf(options.maxNumRequests, shard.index, shard.count);
  const startAtEpochMs = options.startAt === undefined ? undefined : parseStartAt(options.startAt);
  const outputDir = prepareOutputDir(options.outputDir ?? `${defaultOutputDir()}${shard ? `-shard-${shard.index}-of-${shard.count}` : ''}`);

  let simulator: RunningSimulator | undefined;
  let client: ChatClient | undefined;
  try {
    if (options.url === undefined) {
      simulator = await startSimulatorWorker({ profile: options.simProfile, seed: options.seed, faults: options.simFaults });
    }
    const url = options.url ?? simulator!.url;
    client = new ChatClient(chatClientOptionsFor(options, url, headers));
    const workers = workerCount(options, simulator !== undefined);
    const models: ModelInfo[] = await client.waitReady(options.readyTimeoutSec * 1000, hooks.signal);
    const model = options.servedModelName ?? options.model ?? models[0]?.id ?? 'default';
    hooks.onStart?.({
      url,
      embeddedSimulator: simulator !== undefined,
      model,
      dataset: dataset.source,
      conversations: dataset.conversations.length,
      outputDir,
    });

    if (options.resetPrefixCache) {
      const reset = await client.resetPrefixCache();
      if (!reset.ok) warn(`--reset-prefix-cache: the server refused POST /reset_prefix_cache (${reset.detail}); the run starts with whatever its cache holds (vLLM needs VLLM_SERVER_DEV_MODE=1)`);
    }
    const metricsUrl = scrapeUrl(options, url);
    const scraper = metricsUrl === undefined ? undefined : new MetricsScraper(metricsUrl, { intervalMs: options.scrapeIntervalSec * 1000, headers: { ...client.authHeaders } });
    await scraper?.start();

    const files: BenchmarkResult['files'] = { requests: join(outputDir, 'requests.jsonl'), results: join(outputDir, 'results.json') };
    const sink = RequestsJsonlSink.open(files.requests);
    // The run's summaries are recorded as the records come (a few µs each), not read back from requests.jsonl at the
    // end. With worker threads each part aggregates its own records and the parts' aggregates are merged here.
    const aggregate = new RunAggregate(runAggregateOptions(options));
    let parts: Array<SerializedRunAggregate | undefined> | undefined;
    const health = new ClientHealthMonitor();
    health.start();
    let engine: EngineResult;
    try {
      const engineInput = {
        options,
        conversations: dataset.conversations,
        model,
        counter,
        thinkTime: thinkTimeFromOptions(options),
        signal: hooks.signal,
        observer: {
          ...hooks.observer,
          onRecord: (record: RequestRecord) => {
            sink.write(record);
            if (workers === 1) aggregate.add(record);
            hooks.observer?.onRecord?.(record);
          },
        },
      };
      engine =
        workers > 1
          ? await runEngineInWorkers({ ...engineInput, url, headers, workers, shard, maxRequests, startAtEpochMs, onAggregates: (p) => (parts = p) })
          : await runEngine({
              ...engineInput,
              client,
              part:
                shard === undefined && startAtEpochMs === undefined
                  ? undefined
                  : { ...(shard ?? { index: 0, count: 1 }), budget: new RequestBudget(maxRequests), stop: new StopController(), startEpochMs: startAtEpochMs, coordinated: false },
            });
    } finally {
      sink.close();
    }
    const clientHealth = health.stop();
    const serverMetrics = await scraper?.stop();

    const analysis = await analyzeRun(aggregate, parts, files.requests, options, warn);
    for (const w of analysis.warnings) warn(w);
    const { summary, warmupPercentages, perTurn } = analysis;
    const lagWarning = scheduleWarning(summary);
    if (lagWarning !== undefined) warn(lagWarning);
    engine.workerHealth?.forEach((h, i) => {
      for (const w of h?.warnings ?? []) warn(`worker ${i}: ${w}`);
    });
    writeJsonAtomic(
      files.results,
      buildResultsDocument({
        config: publicConfig(options),
        summary,
        warmupPercentages,
        perTurn,
        clientHealth,
        conversations: { ...engine.conversations },
        histograms: analysis.histograms,
        extra: {
          model,
          url: simulator === undefined ? url : 'embedded simulator',
          dataset: dataset.source,
          load_model: engine.loadModel,
          workers,
          worker_health: engine.workerHealth ?? null,
          shard: options.shard ?? null,
          stop_reason: engine.stopReason,
          tokenizer: counter.source ?? counter.tokenizer.name,
          token_counts_exact: counter.tokenizer.exact,
          warnings: [...engine.warnings, ...warnings],
          crashed_tasks: engine.crashedTasks,
          conversation_stats: analysis.conversationStats,
          per_conversation: analysis.perConversation,
          server_metrics: serverMetrics === undefined ? null : compareCacheCounts(serverMetrics, summary),
        },
      }),
    );
    if (options.statsJsonOutput !== undefined) {
      files.statsJson = options.statsJsonOutput;
      await writeReferenceStatsFile(options.statsJsonOutput, files.requests);
    }
    if (options.outputFile !== undefined) {
      files.conversations = options.outputFile;
      writeConversationsJson(options.outputFile, engine.finishedConversations);
    }
    // Reports render from the files just written, exactly as `chatload report` would.
    const reports = await writeRunReports(outputDir, { html: options.report, excel: options.excelOutput, csv: options.csv });
    // Named as the output folder was given (relative stays relative), like the other files.
    const asGiven = (path: string): string => (path.startsWith(resolve(outputDir)) ? join(outputDir, relative(resolve(outputDir), path)) : path);
    if (reports.html !== undefined) files.html = asGiven(reports.html);
    if (reports.excel !== undefined) files.excel = asGiven(reports.excel);
    if (reports.csv !== undefined) files.csv = asGiven(reports.csv);
    return {
      options,
      outputDir,
      files,
      model,
      url,
      summary,
      warmupPercentages,
      perTurn,
      clientHealth,
      serverMetrics: serverMetrics ?? null,
      engine,
      warnings,
      exitCode: exitCodeOf(engine, summary, options.maxErrorRate),
    };
  } finally {
    await client?.close();
    await simulator?.close();
  }
}
