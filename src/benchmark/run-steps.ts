import { replicaHeadersOf } from '../server-engine/replica-headers.js';
import { requestPlanFor } from './engine-habits.js';
import { join } from 'node:path';
import { ChatClient, type ChatClientOptions, type ModelInfo } from '../client/chat-client.js';
import { normalizeBaseUrl } from '../client/request-body.js';
import { splitUrlTextCredentials } from '../client/url-credentials.js';
import { expectedCacheModel, withReplicaPages, type CacheModelSetup } from '../cache-model/setup.js';
import { forkFanOut } from '../conversation/forks.js';
import { runLoad } from '../load/run-load.js';
import { RequestBudget, shareOf } from '../load/partition.js';
import { StopController } from '../load/stop.js';
import type { LoadResult } from '../load/types.js';
import { runLoadInWorkers } from '../load/workers/run-in-workers.js';
import { workerCount } from '../load/workers/worker-count.js';
import type { OutputError } from '../errors/index.js';
import { ClientHealthMonitor, withStaleConnectionResends, type ClientHealth } from '../metrics/client-health.js';
import type { LoadPlan, RunPlan } from '../options/run-plan.js';
import { probeEngine, type EngineProbe } from '../server-engine/detect.js';
import { resetPrefixCache, resetWarning } from '../server-engine/reset-cache.js';
import { scrapeUrl } from '../server-metrics/compare.js';
import { MetricsScraper, type ServerMetricsReport } from '../server-metrics/scraper.js';
import type { GpuPageRead } from '../server-metrics/gpu-figures.js';
import type { RunningSimulator } from '../sim/index.js';
import { defaultOutputDir, prepareOutputFile } from '../store/output-dir.js';
import { claimRunFolder } from '../store/run-lock.js';
import { redactSecrets } from '../store/redact.js';
import type { TokenCounter } from '../tokenizer/index.js';
import { resolveTokenCounter } from '../tokenizer/resolve.js';
import { resolveServedModel } from './model-check.js';
import { Recorder } from './recorder.js';
import { planResume, type ResumedRun } from './resume.js';
import { checkDatasetMedia, countAudioParts, countImageParts, loadForDataset, loadRunDataset, warnBudgetPastDataset, warnClientsWithTrace, type RunDataset } from './run-dataset.js';
import type { writeSync } from 'node:fs';
import type { EngineInfo } from '../server-engine/detect.js';
import type { LoadObserver } from '../load/types.js';
import type { LiveMetrics } from '../live-metrics/index.js';
import { pastContextWarning, requestsPastContext } from './context-check.js';

/** Hooks of a benchmark run: an observer for live output, a stop signal, and a notice of what is about to run. */
export interface BenchmarkHooks {
  observer?: LoadObserver;
  /** Aborting it stops the run gracefully, as SIGINT does. */
  signal?: AbortSignal;
  /** Called before waiting for the server to answer (at most `timeoutMs`, --ready-timeout-sec): a countdown to show. */
  onWaitingForServer?(info: { url: string; timeoutMs: number }): void;
  /** Called after each readiness attempt that failed and will be retried, with its cause (`connect ECONNREFUSED ...`). */
  onServerNotReady?(cause: string): void;
  /** Called once the server is ready, before the first request. */
  onStart?(info: BenchmarkStartInfo): void;
  /** A generation config with `print_stats`: the dataset's distributions as text, to print. */
  onDatasetStats?(text: string): void;
  /** Test-only: the writeSync requests.jsonl is appended with (a failing one stands in for a full disk). */
  writeRecords?: typeof writeSync;
  /**
   * --metrics-port: the live metrics the run's sends and records go to, when the caller serves them across runs
   * (`run --repeat`, `sweep`: one server, a label per run). Without it a run given --metrics-port serves its own.
   */
  liveMetrics?: LiveMetrics;
  /** Called once the live metrics are served (--metrics-port), with their URL. */
  onMetricsServing?(url: string): void;
  /** --llmd-report's `scenario.load.standardized.stage`: a sweep gives its point's index (from 0); 0 otherwise. */
  llmdStage?: number;
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
  /** The requests the run is expected to send: -n when given, at most what the dataset holds (requestsHeld); undefined when unknown. */
  requests: number | undefined;
  /** --duration in ms, when given: the run's progress is then its time. */
  durationMs: number | undefined;
  outputDir: string;
  /** The load the run offers, as flags: `-p 1 -k 1 (-p's default against --url; the built-in demo uses 16)`. */
  load: string;
}

/*
 * The steps of one run (runBenchmark, issue #33): prepare (tokenizer, dataset, output folder, --resume), connect and
 * probe (the simulator or the server, readiness, engine detection, the model, the expected-cache model), run the
 * load (its records go to the Recorder), then runBenchmark finalizes and writes. Each takes what the one before made.
 */

/** Says a warning: into the run's list and to the observer. */
export type Warn = (message: string) => void;

/** What the first step made: nothing sent yet. */
export interface PreparedRun {
  counter: TokenCounter;
  /** The tokenizer's warnings, held back until the expected-cache model knows whose ids it counts in. */
  tokenizerWarnings: string[];
  dataset: RunDataset;
  load: LoadPlan;
  imageParts: number;
  /** Audio parts (`input_audio`) in the dataset's messages. */
  audioParts: number;
  /** This shard's share of -n (the whole -n without shards). */
  maxRequests: number | undefined;
  outputDir: string;
  /** Removes the output folder's lock (chatload.lock): called once the run's files are written, or it failed. */
  releaseOutputDir: () => void;
  resumed: ResumedRun | undefined;
}

/** Tokenizer, dataset, the load for it, the output folder (claimed), and what an interrupted run left (--resume). */
export async function prepareRun(plan: RunPlan, hooks: BenchmarkHooks, warn: Warn): Promise<PreparedRun> {
  const tokenizerWarnings: string[] = [];
  const counter = await resolveTokenCounter({ ...plan.dataset.tokenizer, warn: (message) => tokenizerWarnings.push(message) });
  const dataset = await loadRunDataset(plan.dataset, counter, warn);
  const datasetLoad = loadForDataset(plan.load, plan.dataset, dataset);
  if (!plan.outputs.resume) warnBudgetPastDataset(datasetLoad, dataset, warn);
  warnClientsWithTrace(datasetLoad, dataset, !plan.defaulted.includes('numClients'), warn);
  if (dataset.stats !== undefined) hooks.onDatasetStats?.(dataset.stats);
  const imageParts = countImageParts(dataset.conversations);
  const audioParts = countAudioParts(dataset.conversations);
  checkDatasetMedia({ images: imageParts, audio: audioParts }, plan.request.endpoint, warn);
  // A shard runs its share of the whole: the conversations it owns and its exact share of -n.
  const { shard } = plan.scale;
  const maxNumRequests = plan.load.maxNumRequests;
  const maxRequests = maxNumRequests === undefined || shard === undefined ? maxNumRequests : shareOf(maxNumRequests, shard.index, shard.count);
  // Claimed before the server is contacted: a second run into the same folder is refused before it sends anything.
  const fallback = `${defaultOutputDir()}${shard ? `-shard-${shard.index}-of-${shard.count}` : ''}`;
  const { outputDir, release } = claimRunFolder(plan.outputs.outputDir, fallback, plan.outputs.overwrite, plan.outputs.resume);
  try {
    // The other files the run writes, proved writable too before anything is sent.
    const { outputFile, statsJsonOutput, excel, csv, llmdReport } = plan.outputs;
    if (outputFile !== undefined) prepareOutputFile('-o', outputFile);
    if (statsJsonOutput !== undefined) prepareOutputFile('--stats-json-output', statsJsonOutput);
    if (typeof excel === 'string') prepareOutputFile('--excel-output', excel);
    if (typeof csv === 'string') prepareOutputFile('--csv', csv);
    if (llmdReport !== undefined) prepareOutputFile('--llmd-report', llmdReport);
    // --resume: what the interrupted run left, checked against the dataset before anything is sent.
    const resumed = plan.outputs.resume ? await planResume(join(outputDir, 'requests.jsonl'), dataset.conversations, datasetLoad) : undefined;
    const load = resumed === undefined ? datasetLoad : { ...datasetLoad, maxNumRequests: resumed.maxNumRequests, warmupStep: false };
    return { counter, tokenizerWarnings, dataset, load, imageParts, audioParts, maxRequests, outputDir, releaseOutputDir: release, resumed };
  } catch (error) {
    release();
    throw error;
  }
}

/** The options of the run's ChatClient (and of each worker's): its parts of the plan, and the server's URL. */
export function clientOptions(plan: RunPlan, url: string, load: LoadPlan, fanOut = 1): ChatClientOptions {
  const { apiKey, headers } = plan.target;
  // A session whose sub-agents run concurrently has that many requests in flight: each needs its own connection, or
  // the children would queue in the pool with their TTFT clocks running. Twice that: a response that goes on after
  // its [DONE] holds its connection while the rest is drained (up to AFTER_DONE_GRACE_MS), and the next request takes
  // a spare one rather than wait behind it with its clock running (issue #35). Spares open only when needed.
  const connections = load.connections * fanOut * 2;
  const replicaHeaders = replicaHeadersOf(plan.target.replicaHeader);
  return { baseUrl: url, apiKey, headers, connections, endpoint: plan.request.endpoint, replicaHeaders, ...plan.deadlines.request };
}

/** What a run holds open until it ends, whatever happens: closed by runBenchmark. */
export interface RunResources {
  simulator?: RunningSimulator;
  client?: ChatClient;
}

/** The server the run talks to, as the second step found it. */
export interface ConnectedRun {
  url: string;
  /** The URL as every output shows it, credentials redacted. */
  shownUrl: string;
  client: ChatClient;
  fanOut: number;
  workers: number;
  model: string;
  probe: EngineProbe;
  cacheModel: CacheModelSetup;
  rootUrl: string;
  /** The --scrape-metrics URL, when given. */
  metricsUrl: string | undefined;
}

/**
 * Starts the simulator (no --url), waits for the server, detects its engine (bounded GETs that never fail the run),
 * checks the model and sets the expected-cache model up. What it opens goes into `open`, for the caller to close.
 */
export async function connectAndProbe(plan: RunPlan, prepared: PreparedRun, hooks: BenchmarkHooks, warn: Warn, open: RunResources): Promise<ConnectedRun> {
  const { target } = plan;
  if (target.url === undefined) {
    // It serves the model the run asks for, so -m names a tokenizer and a model at once, as against a real server.
    // Loaded only when the run starts its own simulator: prom-client and the engine model are not needed against
    // a --url (issue 17: every module loaded costs start-up).
    const { startSimulatorWorker } = await import('../sim/index.js');
    open.simulator = await startSimulatorWorker({ ...plan.simulator, modelName: target.servedModelName ?? target.model });
  }
  const url = target.url ?? open.simulator!.url;
  // The URL as any output shows it: its credentials go to the server as Basic auth, and nowhere else.
  const shownUrl = redactSecrets(url);
  const fanOut = forkFanOut(prepared.dataset.conversations);
  const client = (open.client = new ChatClient(clientOptions(plan, url, prepared.load, fanOut)));
  if (client.apiKeyReplacedByUrl) warn('the URL carries credentials, sent as Basic auth; the API key (--api-key or OPENAI_API_KEY) is not sent');
  const workers = workerCount(plan.scale.workers, prepared.load.peakConcurrency, open.simulator !== undefined);
  hooks.onWaitingForServer?.({ url: shownUrl, timeoutMs: plan.deadlines.readyMs });
  const models: ModelInfo[] = await client.waitReady(plan.deadlines.readyMs, hooks.signal, (cause) => hooks.onServerNotReady?.(cause));
  const base = normalizeBaseUrl(url)!; // the client validated it
  const rootUrl = `${base.origin}${base.pathname}`;
  const metricsUrl = scrapeUrl(target, url);
  // Bounded GETs that never fail the run (issue #12, part 2); the auth goes in the headers, never in a URL.
  const probeMetricsUrl = metricsUrl === undefined ? undefined : (splitUrlTextCredentials(metricsUrl)?.url.href ?? metricsUrl);
  // Detection reads /metrics (the --scrape-metrics URL, or <root>/metrics); the KV capacity is read from that page.
  const probe = await probeEngine({ rootUrl, headers: client.authHeaders, metricsUrl: probeMetricsUrl, models: client.modelsAnswer, signal: hooks.signal });
  const model = resolveServedModel(target, models, shownUrl, probe.engine.name, warn);
  await warnPastServedContext(prepared, models.find((m) => m.id === model)?.maxModelLen, plan.load.maxTurns, warn);
  const server = { rootUrl, headers: client.authHeaders, model };
  const { counter, tokenizerWarnings } = prepared;
  const cacheModel = await expectedCacheModel({ plan: plan.expectedCache, probe, counter, tokenizerOption: plan.dataset.tokenizer.tokenizer, tokenizerWarnings, server, workers, signal: hooks.signal, warn });
  return { url, shownUrl, client, fanOut, workers, model, probe, cacheModel, rootUrl, metricsUrl };
}

/** Warns before the run when the dataset's requests pass the served model's max_model_len (when /v1/models says it). */
async function warnPastServedContext(prepared: PreparedRun, maxModelLen: number | undefined, maxTurns: number | undefined, warn: Warn): Promise<void> {
  if (maxModelLen === undefined) return;
  const { conversations } = prepared.dataset;
  const past = await requestsPastContext(conversations, prepared.counter, maxModelLen, maxTurns);
  const warning = pastContextWarning(past, conversations.length, maxModelLen);
  if (warning !== undefined) warn(warning);
}

/** What the load left: its result, the Recorder that took its records, and what was measured beside. */
export interface LoadOutcome {
  load: LoadResult;
  recorder: Recorder;
  /** The expected-cache model the load ran with (connected's, with the capacity of the replicas' pages). */
  cacheModel: CacheModelSetup;
  /** The first failed write of requests.jsonl, with the records it lost; undefined when every record is on disk. */
  outputError: OutputError | undefined;
  clientHealth: ClientHealth;
  /** When the load ended (epoch ms): with clientHealth.wall_ms, its wall-clock span (--llmd-report's run.time). */
  endedAtMs: number;
  serverMetrics: ServerMetricsReport | undefined;
  /** --scrape-metrics repeated: every page's report, in order, the first one's being serverMetrics. */
  metricsPages?: ServerMetricsReport[];
  /** The --scrape-metrics pages that showed dcgm-exporter's GPU names (issue #32, part 5), in order. */
  gpuPages: GpuPageRead[];
}

/** --reset-prefix-cache, then the load (in this thread or in worker threads) with /metrics scraped around it. */
export async function runLoadAndScrape(plan: RunPlan, prepared: PreparedRun, connected: ConnectedRun, hooks: BenchmarkHooks, warn: Warn): Promise<LoadOutcome> {
  const { target, scale } = plan;
  const { client, rootUrl, metricsUrl, workers, probe } = connected;
  if (target.resetPrefixCache) {
    const reset = await resetPrefixCache(probe.engine.name, { rootUrl, headers: client.authHeaders, signal: hooks.signal });
    if (!reset.ok) warn(resetWarning(probe.engine.name, reset));
  }
  const scrapeOptions = { intervalMs: target.scrapeIntervalMs, headers: { ...client.authHeaders }, engine: probe.engine.name };
  const scraper = metricsUrl === undefined ? undefined : new MetricsScraper(metricsUrl, scrapeOptions);
  // --scrape-metrics repeated: every page (one per replica); the first is the scraper above (server_metrics, as with one).
  const replicaScrapers = target.scrapePages.slice(1).map((url) => new MetricsScraper(url, scrapeOptions));
  await Promise.all([scraper?.start(), ...replicaScrapers.map((s) => s.start())]);
  // The replicas' pages, read before the load: the capacity they state, summed, is the ideal cache's.
  const cacheModel = replicaScrapers.length === 0 ? connected.cacheModel : withReplicaPages(connected.cacheModel, [scraper, ...replicaScrapers].map((s) => s?.kvCapacity));
  const { load, resumed, maxRequests, dataset } = prepared;
  // Where each finished request goes: requests.jsonl (a failed write stops new requests, and the run then ends with
  // an OutputError, issue #16), the outcomes, the run's aggregate (recorded as the records come, a few µs each, not
  // read back from requests.jsonl at the end), the observers.
  const requestsFile = join(prepared.outputDir, 'requests.jsonl');
  const recorder = new Recorder({ requestsFile, summary: plan.summary, workers, resumed, observer: hooks.observer, warn, writeRecords: hooks.writeRecords });
  const health = new ClientHealthMonitor();
  health.start();
  const { shard, startAtEpochMs } = scale;
  const expectedCache = cacheModel.config;
  const loadInput = {
    load,
    request: requestPlanFor(plan.request, probe),
    deadlines: plan.deadlines,
    keepFinishedConversations: plan.outputs.outputFile !== undefined,
    conversations: resumed?.conversations ?? dataset.conversations,
    datasetIndices: resumed?.datasetIndices,
    resumePoints: resumed?.resumePoints,
    model: connected.model,
    counter: prepared.counter,
    expectedCache,
    signal: hooks.signal,
    stopSignal: recorder.stopSignal,
    observer: { ...hooks.observer, onRecord: recorder.record },
  };
  let result: LoadResult;
  let outputError: OutputError | undefined;
  try {
    result =
      workers > 1
        ? await runLoadInWorkers({
            ...loadInput,
            client: clientOptions(plan, connected.url, load, connected.fanOut),
            tokenizer: plan.dataset.tokenizer,
            summary: plan.summary,
            workers,
            expectedCache,
            shard,
            maxRequests: resumed === undefined ? maxRequests : resumed.maxNumRequests,
            startAtEpochMs,
            onAggregates: (parts) => recorder.addParts(parts),
          })
        : await runLoad({
            ...loadInput,
            client,
            part:
              shard === undefined && startAtEpochMs === undefined
                ? undefined
                : { ...(shard ?? { index: 0, count: 1 }), budget: new RequestBudget(maxRequests), stop: new StopController(), startEpochMs: startAtEpochMs, coordinated: false },
          });
  } finally {
    outputError = recorder.finish();
  }
  const clientHealth = withStaleConnectionResends(health.stop(), recorder.staleConnectionResends);
  const endedAtMs = Date.now();
  const [serverMetrics, ...otherPages] = await Promise.all([scraper?.stop(), ...replicaScrapers.map((s) => s.stop())]);
  if (serverMetrics?.warning) warn(serverMetrics.warning);
  for (const page of otherPages) if (page?.warning) warn(page.warning);
  const metricsPages = replicaScrapers.length === 0 || serverMetrics === undefined ? undefined : [serverMetrics, ...(otherPages as ServerMetricsReport[])];
  const gpuPages = gpuPagesOf([scraper, ...replicaScrapers], [serverMetrics, ...otherPages]);
  return { load: result, recorder, cacheModel, outputError, clientHealth, endedAtMs, serverMetrics, metricsPages, gpuPages };
}

/** The scrapers whose page showed GPUs, each with its report's counts. */
function gpuPagesOf(scrapers: ReadonlyArray<MetricsScraper | undefined>, reports: ReadonlyArray<ServerMetricsReport | undefined>): GpuPageRead[] {
  const pages: GpuPageRead[] = [];
  scrapers.forEach((scraper, i) => {
    const report = reports[i];
    if (scraper?.gpu != null && report !== undefined) pages.push({ log: scraper.gpu, scrapes: report.scrapes, failures: report.failures, lastError: report.last_error });
  });
  return pages;
}
