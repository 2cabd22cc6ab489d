import type { writeSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ChatClient, type ChatClientOptions, type ModelInfo } from '../client/chat-client.js';
import { normalizeBaseUrl } from '../client/request-body.js';
import { splitUrlTextCredentials } from '../client/url-credentials.js';
import { runEngine } from '../engine/engine.js';
import { runEngineInWorkers } from '../engine/workers/run-in-workers.js';
import { workerCount } from '../engine/workers/worker-count.js';
import type { EngineObserver, EngineResult } from '../engine/types.js';
import { ExitCode, OutputError } from '../errors/index.js';
import type { ErrorCount, ErrorTally } from '../metrics/error-tally.js';
import { ClientHealthMonitor, withStaleConnectionResends, type ClientHealth } from '../metrics/client-health.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import type { Summary } from '../metrics/summary.js';
import { MetricsScraper, type ServerMetricsReport } from '../server-metrics/scraper.js';
import { compareCacheCounts, scrapeUrl } from '../server-metrics/compare.js';
import { expectedCacheModel, runPrefixCacheOf } from '../cache-model/setup.js';
import type { RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import { probeEngine, type EngineInfo } from '../server-engine/detect.js';
import { resetPrefixCache, resetWarning } from '../server-engine/reset-cache.js';
import { resolveServedModel } from './model-check.js';
import { scheduleWarning } from '../metrics/run-analysis.js';
import type { RunOptionsInput } from '../options/run-options.js';
import { isRunPlan, planRun, type LoadPlan, type RunPlan } from '../options/run-plan.js';
import { RequestBudget, shareOf } from '../engine/partition.js';
import { StopController } from '../engine/stop.js';
import { forkFanOut } from '../conversation/forks.js';
import { writeConversationsJson } from '../report/conversations-json.js';
import { REDACTED, redactSecrets } from '../store/redact.js';
import { buildResultsDocument, writeJsonAtomic } from '../store/results-json.js';
import { writeReferenceStatsFile } from '../report/stats-json.js';
import { writeRunReports } from '../report/write-reports.js';
import type { RunningSimulator } from '../sim/index.js';
import { resolveTokenCounter } from '../tokenizer/resolve.js';
import { claimOutputDir, defaultOutputDir, describeFsError, prepareOutputDir } from '../store/output-dir.js';
import { Recorder } from './recorder.js';
import { planResume, resumedCounts } from './resume.js';
import { checkDatasetImages, countImageParts, loadForDataset, loadRunDataset } from './run-dataset.js';

/** Hooks of a benchmark run: an observer for live output, a stop signal, and a notice of what is about to run. */
export interface BenchmarkHooks {
  observer?: EngineObserver;
  /** Aborting it stops the run gracefully, as SIGINT does. */
  signal?: AbortSignal;
  /** Called before waiting for the server to answer (at most `timeoutMs`, --ready-timeout-sec): a countdown to show. */
  onWaitingForServer?(info: { url: string; timeoutMs: number }): void;
  /** Called once the server is ready, before the first request. */
  onStart?(info: BenchmarkStartInfo): void;
  /** A generation config with `print_stats`: the dataset's distributions as text, to print. */
  onDatasetStats?(text: string): void;
  /** Test-only: the writeSync requests.jsonl is appended with (a failing one stands in for a full disk). */
  writeRecords?: typeof writeSync;
}

/** What is about to run. */
export interface BenchmarkStartInfo {
  /** The server's URL, credentials redacted (`http://user:[redacted]@host`). */
  url: string;
  /** True when chatload started its own simulator (no --url). */
  embeddedSimulator: boolean;
  model: string;
  /** The serving engine detected behind the URL (results.json `engine`). */
  engine: EngineInfo;
  dataset: string;
  conversations: number;
  /** The requests the run is expected to send: -n when given, else the user turns to replay; undefined when unknown. */
  requests: number | undefined;
  /** --duration in ms, when given: the run's progress is then its time. */
  durationMs: number | undefined;
  outputDir: string;
}

/** User turns (requests to send) in the conversations. */
function userTurns(conversations: ReadonlyArray<{ messages: ReadonlyArray<{ role: string }> }>): number {
  let n = 0;
  for (const c of conversations) for (const m of c.messages) if (m.role === 'user') n++;
  return n;
}

/** Everything a finished run produced. The files are already on disk. */
export interface BenchmarkResult {
  /** The validated plan the run followed. */
  plan: RunPlan;
  outputDir: string;
  files: { requests: string; results: string; statsJson?: string; conversations?: string; html?: string; excel?: string; csv?: string };
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
  clientHealth: ClientHealth;
  /** What --scrape-metrics read from the server's /metrics; null without it. */
  serverMetrics: ServerMetricsReport | null;
  engine: EngineResult;
  /** Run-level warnings beyond the engine's (server refusals, coordinated omission). */
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
function publicConfig(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const headers = Array.isArray(config.headers) ? (config.headers as string[]) : [];
  return redactSecrets({
    ...config,
    apiKey: config.apiKey === undefined ? undefined : REDACTED,
    // Names only: a header's value may be a secret, in either "Name: value" or "Name=value" form.
    headers: headers.map((line) => `${line.split(/[:=]/)[0]!.trim()}: ${REDACTED}`),
  });
}

/** The options of the run's ChatClient (and of each worker's): its parts of the plan, and the server's URL. */
function clientOptions(plan: RunPlan, url: string, load: LoadPlan, fanOut = 1): ChatClientOptions {
  const { apiKey, headers } = plan.target;
  // A session whose sub-agents run concurrently has that many requests in flight: each needs its own connection, or
  // the children would queue in the pool with their TTFT clocks running.
  return { baseUrl: url, apiKey, headers, connections: load.connections * fanOut, endpoint: plan.request.endpoint, ...plan.deadlines.request };
}

function exitCodeOf(engine: EngineResult, summary: Summary, maxErrorRate: number, outcomes: ErrorTally): number {
  if (engine.stopReason === 'interrupted') return ExitCode.interrupted;
  // Nothing succeeded, warmup included (a wrong model, a dead route): the run measured nothing, whatever the rate.
  if (outcomes.failed > 0 && outcomes.ok === 0) return ExitCode.runFailed;
  // Requests cut by the run's own stop (--benchmark-timeout-sec) are not the server's errors.
  const failed = summary.failed - summary.failed_by_kind.aborted;
  const total = summary.completed + failed;
  return total > 0 && failed / total > maxErrorRate ? ExitCode.runFailed : ExitCode.ok;
}

/**
 * Runs one benchmark end to end: dataset → (embedded simulator when there is no --url) → readiness → engine →
 * records (appended to requests.jsonl as they end) → summaries → results.json and the other files.
 * Bad input throws a ChatloadError before anything is sent; after that, nothing that was measured is lost.
 */
export async function runBenchmark(input: RunOptionsInput | RunPlan, hooks: BenchmarkHooks = {}): Promise<BenchmarkResult> {
  const plan = isRunPlan(input) ? input : planRun(input);
  const { target, scale } = plan;
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
    hooks.observer?.onWarning?.(message);
  };
  // The tokenizer's warnings wait for the expected-cache model: with the server's ids, "approximate" is not the news.
  const tokenizerWarnings: string[] = [];
  const counter = await resolveTokenCounter({ ...plan.dataset.tokenizer, warn: (message) => tokenizerWarnings.push(message) });
  const dataset = await loadRunDataset(plan.dataset, counter, warn);
  const datasetLoad = loadForDataset(plan.load, dataset);
  if (dataset.stats !== undefined) hooks.onDatasetStats?.(dataset.stats);
  const imageParts = countImageParts(dataset.conversations);
  checkDatasetImages(imageParts, plan.request.endpoint, warn);
  // A shard runs its share of the whole: the conversations it owns and its exact share of -n.
  const { shard, startAtEpochMs } = scale;
  const maxNumRequests = plan.load.maxNumRequests;
  const maxRequests = maxNumRequests === undefined || shard === undefined ? maxNumRequests : shareOf(maxNumRequests, shard.index, shard.count);
  const outputDir = prepareOutputDir(plan.outputs.outputDir ?? `${defaultOutputDir()}${shard ? `-shard-${shard.index}-of-${shard.count}` : ''}`);
  claimOutputDir(outputDir, plan.outputs.overwrite, plan.outputs.resume);
  // --resume: what the interrupted run left, checked against the dataset before anything is sent.
  const resumed = plan.outputs.resume ? await planResume(join(outputDir, 'requests.jsonl'), dataset.conversations, datasetLoad) : undefined;
  const load = resumed === undefined ? datasetLoad : { ...datasetLoad, maxNumRequests: resumed.maxNumRequests, warmupStep: false };

  let simulator: RunningSimulator | undefined;
  let client: ChatClient | undefined;
  try {
    if (target.url === undefined) {
      // It serves the model the run asks for, so -m names a tokenizer and a model at once, as against a real server.
      // Loaded only when the run starts its own simulator: prom-client and the engine model are not needed against
      // a --url (issue 17: every module loaded costs start-up).
      const { startSimulatorWorker } = await import('../sim/index.js');
      simulator = await startSimulatorWorker({ ...plan.simulator, modelName: target.servedModelName ?? target.model });
    }
    const url = target.url ?? simulator!.url;
    // The URL as any output shows it: its credentials go to the server as Basic auth, and nowhere else.
    const shownUrl = redactSecrets(url);
    const fanOut = forkFanOut(dataset.conversations);
    client = new ChatClient(clientOptions(plan, url, load, fanOut));
    if (client.apiKeyReplacedByUrl) {
      warn('the URL carries credentials, sent as Basic auth; the API key (--api-key or OPENAI_API_KEY) is not sent');
    }
    const workers = workerCount(scale.workers, load.peakConcurrency, simulator !== undefined);
    hooks.onWaitingForServer?.({ url: shownUrl, timeoutMs: plan.deadlines.readyMs });
    const models: ModelInfo[] = await client.waitReady(plan.deadlines.readyMs, hooks.signal);
    const base = normalizeBaseUrl(url)!; // the client validated it
    const rootUrl = `${base.origin}${base.pathname}`;
    const metricsUrl = scrapeUrl(target, url);
    // Bounded GETs that never fail the run (issue #12, part 2); the auth goes in the headers, never in a URL.
    const probeMetricsUrl = metricsUrl === undefined ? undefined : (splitUrlTextCredentials(metricsUrl)?.url.href ?? metricsUrl);
    // Detection reads /metrics (the --scrape-metrics URL, or <root>/metrics); the KV capacity is read from that page.
    const probe = await probeEngine({ rootUrl, headers: client.authHeaders, metricsUrl: probeMetricsUrl, models: client.modelsAnswer, signal: hooks.signal });
    const serverEngine = probe.engine;
    const model = resolveServedModel(target, models, shownUrl, serverEngine.name, warn);
    const server = { rootUrl, headers: client.authHeaders, model };
    const cacheModel = await expectedCacheModel({ plan: plan.expectedCache, probe, counter, tokenizerOption: plan.dataset.tokenizer.tokenizer, tokenizerWarnings, server, workers, signal: hooks.signal, warn });
    const expectedCache = cacheModel.config;
    hooks.onStart?.({
      url: shownUrl,
      embeddedSimulator: simulator !== undefined,
      model,
      engine: serverEngine,
      dataset: dataset.source,
      conversations: dataset.conversations.length,
      requests: resumed !== undefined ? resumed.maxNumRequests : Math.min(maxRequests ?? Infinity, userTurns(dataset.conversations)),
      durationMs: plan.deadlines.durationMs,
      outputDir,
    });

    if (target.resetPrefixCache) {
      const reset = await resetPrefixCache(serverEngine.name, { rootUrl, headers: client.authHeaders, signal: hooks.signal });
      if (!reset.ok) warn(resetWarning(serverEngine.name, reset));
    }
    const scraper =
      metricsUrl === undefined
        ? undefined
        : new MetricsScraper(metricsUrl, { intervalMs: target.scrapeIntervalMs, headers: { ...client.authHeaders }, engine: serverEngine.name });
    await scraper?.start();

    const files: BenchmarkResult['files'] = { requests: join(outputDir, 'requests.jsonl'), results: join(outputDir, 'results.json') };
    // Where each finished request goes: requests.jsonl (a failed write stops new requests, and the run then ends with
    // an OutputError, issue #16), the outcomes, the run's aggregate (recorded as the records come, a few µs each, not
    // read back from requests.jsonl at the end), the observers.
    const recorder = new Recorder({ requestsFile: files.requests, summary: plan.summary, workers, resumed, observer: hooks.observer, warn, writeRecords: hooks.writeRecords });
    let outputError: OutputError | undefined;
    const health = new ClientHealthMonitor();
    health.start();
    let engine: EngineResult;
    try {
      const engineInput = {
        load,
        request: plan.request,
        deadlines: plan.deadlines,
        keepFinishedConversations: plan.outputs.outputFile !== undefined,
        conversations: resumed?.conversations ?? dataset.conversations,
        datasetIndices: resumed?.datasetIndices,
        resumePoints: resumed?.resumePoints,
        model,
        counter,
        expectedCache,
        signal: hooks.signal,
        stopSignal: recorder.stopSignal,
        observer: { ...hooks.observer, onRecord: recorder.record },
      };
      engine =
        workers > 1
          ? await runEngineInWorkers({
              ...engineInput,
              client: clientOptions(plan, url, load, fanOut),
              tokenizer: plan.dataset.tokenizer,
              summary: plan.summary,
              workers,
              expectedCache,
              shard,
              maxRequests: resumed === undefined ? maxRequests : resumed.maxNumRequests,
              startAtEpochMs,
              onAggregates: (parts) => recorder.addParts(parts),
            })
          : await runEngine({
              ...engineInput,
              client,
              part:
                shard === undefined && startAtEpochMs === undefined
                  ? undefined
                  : { ...(shard ?? { index: 0, count: 1 }), budget: new RequestBudget(maxRequests), stop: new StopController(), startEpochMs: startAtEpochMs, coordinated: false },
            });
    } finally {
      outputError = recorder.finish();
    }
    const outcomes = recorder.outcomes;
    const clientHealth = withStaleConnectionResends(health.stop(), recorder.staleConnectionResends);
    const serverMetrics = await scraper?.stop();
    if (serverMetrics?.warning) warn(serverMetrics.warning);

    const analysis = await recorder.analysis();
    for (const w of analysis.warnings) warn(w);
    const { summary, warmupPercentages, perTurn } = analysis;
    const prefixCache = runPrefixCacheOf(cacheModel, analysis.prefixCache, summary, target.resetPrefixCache, warn);
    const lagWarning = scheduleWarning(summary);
    if (lagWarning !== undefined) warn(lagWarning);
    engine.workerHealth?.forEach((h, i) => {
      for (const w of h?.warnings ?? []) warn(`worker ${i}: ${w}`);
    });
    const stopReason = outputError === undefined ? engine.stopReason : 'output_error';
    try {
      writeJsonAtomic(
        files.results,
        buildResultsDocument({
          config: publicConfig(plan.config),
          summary,
          warmupPercentages,
          perTurn,
          clientHealth,
          conversations: { ...resumedCounts(engine.conversations, resumed) },
          histograms: analysis.histograms,
          peaks: analysis.peaks,
          percentileMetrics: plan.summary.percentileMetrics,
          extra: {
            model,
            engine: serverEngine,
            url: simulator === undefined ? shownUrl : 'embedded simulator',
            dataset: dataset.source,
            load_model: engine.loadModel,
            workers,
            worker_health: engine.workerHealth ?? null,
            shard: shard === undefined ? null : `${shard.index}/${shard.count}`,
            stop_reason: stopReason,
            lost_records: outputError?.lostRecords ?? 0,
            tokenizer: cacheModel.tokenizer ?? counter.source ?? counter.tokenizer.name,
            token_counts_exact: cacheModel.exact,
            dataset_image_parts: imageParts,
            warnings: [...engine.warnings, ...warnings],
            crashed_tasks: engine.crashedTasks,
            top_errors: outcomes.top(10),
            conversation_stats: analysis.conversationStats,
            agentic: analysis.agentic,
            per_conversation: analysis.perConversation,
            prefix_cache: prefixCache,
            server_metrics: serverMetrics === undefined ? null : compareCacheCounts(serverMetrics, summary),
          },
        }),
      );
    } catch (error) {
      // The first failure is the cause to name; the lost_records count it carries is in its message.
      throw outputError ?? new OutputError(files.results, describeFsError(error), undefined, { cause: error });
    }
    if (outputError !== undefined) throw outputError;
    const { statsJsonOutput, outputFile } = plan.outputs;
    if (statsJsonOutput !== undefined) {
      files.statsJson = statsJsonOutput;
      await writeReferenceStatsFile(statsJsonOutput, files.requests);
    }
    if (outputFile !== undefined) {
      files.conversations = outputFile;
      writeConversationsJson(outputFile, engine.finishedConversations);
    }
    // Reports render from the files just written, exactly as `chatload report` would.
    const reports = await writeRunReports(outputDir, { html: plan.outputs.report, excel: plan.outputs.excel, csv: plan.outputs.csv });
    // Named as the output folder was given (relative stays relative), like the other files.
    const asGiven = (path: string): string => (path.startsWith(resolve(outputDir)) ? join(outputDir, relative(resolve(outputDir), path)) : path);
    if (reports.html !== undefined) files.html = asGiven(reports.html);
    if (reports.excel !== undefined) files.excel = asGiven(reports.excel);
    if (reports.csv !== undefined) files.csv = asGiven(reports.csv);
    return {
      plan,
      outputDir,
      files,
      model,
      url: shownUrl,
      serverEngine,
      summary,
      warmupPercentages,
      perTurn,
      prefixCache,
      clientHealth,
      serverMetrics: serverMetrics ?? null,
      engine,
      warnings,
      topErrors: outcomes.top(3),
      exitCode: exitCodeOf(engine, summary, plan.summary.maxErrorRate, outcomes),
    };
  } finally {
    await client?.close();
    await simulator?.close();
  }
}
