import { optionsError, checkRunOptions, formatProblem, isOpenLoop, type RunOptions, type RunOptionsInput } from './run-options.js';
import type { DistributionSpec } from './values/distribution-spec.js';
import type { FaultRule } from './values/fault-spec.js';
import type { RouterKind } from './values/replicas.js';
import type { Shard } from './values/shard.js';
import type { Slos } from './values/slos.js';
import type { TraceFilter } from './values/trace-filter.js';
import type { TraceWindow } from './values/trace-window.js';
import type { ColumnMap } from './values/column-map.js';

/*
 * The RunPlan: the run options validated once and organized by the part of chatload that uses them, with units in
 * the names (ms, per second) and every string already parsed. Each part goes to its user alone: the load takes
 * `load`, `request` and `deadlines`, the client its options from `target` and `deadlines.request`, the summaries
 * `summary`. So the walk of any flag is: its table entry (table/*.ts) → its part here → the code that uses it.
 */

/** The server: where requests go, as whom, and what else is asked of it. */
export interface TargetPlan {
  /** Base URL; undefined: start the built-in simulator. */
  readonly url?: string;
  /** -m: the model named in requests (after --served-model-name) and whose tokenizer counts tokens. */
  readonly model?: string;
  readonly servedModelName?: string;
  /** Sent as a Bearer token; never written anywhere. */
  readonly apiKey?: string;
  /** Extra request headers (--header), parsed. */
  readonly headers: Readonly<Record<string, string>>;
  readonly resetPrefixCache: boolean;
  /** --scrape-metrics: false, true (the server's <url>/metrics), or the URL to scrape (the first one when repeated). */
  readonly scrapeMetrics: boolean | string;
  /**
   * --scrape-metrics given more than once: every page, in order (the first is `scrapeMetrics`); else empty. The pages
   * with an engine's counters are the replicas' (docs/METRICS.md, "Replicas"); others are read for what they hold.
   */
  readonly scrapePages: readonly string[];
  /** --replica-header: the response header naming the replica; undefined: the known ones (server-engine/replica-headers.ts). */
  readonly replicaHeader?: string;
  readonly scrapeIntervalMs: number;
}

/** How tokens are counted: what resolveTokenCounter takes. */
export interface TokenizerChoice {
  readonly tokenizer?: string;
  readonly model?: string;
  readonly trustRemoteCode: boolean;
}

/** The conversations replayed. */
export interface DatasetPlan {
  /** -i; undefined: the built-in demo dataset. */
  readonly inputFile?: string;
  /** Seeds the demo dataset and a generation config. */
  readonly seed: number;
  readonly tokenizer: TokenizerChoice;
  /** --allow-invalid-utf8: read non-UTF-8 bytes as U+FFFD (with a warning) instead of refusing the file. */
  readonly allowInvalidUtf8: boolean;
  /** How a production trace is read: --input-format (undefined: detected), --trace-block-size, --trace-window. */
  readonly trace: {
    readonly format?: 'mooncake' | 'bailian' | 'azure' | 'burstgpt' | 'weka' | 'otel' | 'mooncake-toolagent';
    readonly blockSize?: number;
    readonly window?: TraceWindow;
    readonly filter?: TraceFilter;
  };
  /** How a Hugging Face dataset is read: --columns (undefined: the layout detected), --split (undefined: train). */
  readonly hf: { readonly columns?: ColumnMap; readonly split?: string };
}

/** A trace's replay at its timestamps (the load model when -i is a trace, whatever the closed-loop flags say). */
export interface TraceReplayPlan {
  /** --trace-speed: trace time is divided by it. */
  readonly speed: number;
  /** --max-concurrency; undefined for no cap. */
  readonly maxConcurrency?: number;
}

/** The reference's closed loop: `numClients` clients, each with one request in flight, over `maxActiveConversations`. */
export interface FixedClientsPlan {
  readonly type: 'fixed-clients';
  readonly numClients: number;
  /** -k, or -p when not given. */
  readonly maxActiveConversations: number;
  readonly sampling: 'round_robin' | 'random';
  /** Mean requests/s per client; 0 for no pause. */
  readonly requestRatePerSec: number;
  readonly earlyStop: boolean;
}

/** Open-loop sessions: users arriving on their own schedule, thinking between turns. */
export interface OpenSessionsPlan {
  readonly type: 'open-sessions';
  /** Sessions/s after any ramp, gamma shape, and the ramp from `startPerSec` over `seconds`. */
  readonly arrivals: { readonly ratePerSec: number; readonly burstiness: number; readonly rampUp?: { readonly startPerSec: number; readonly seconds: number } };
  /** Requests in flight at most; undefined for no cap. */
  readonly maxConcurrency?: number;
  /** --think-time in seconds; undefined: the dataset's per-turn values, else none. */
  readonly thinkTimeSec?: DistributionSpec;
}

/** The load offered, for the whole run (the load splits it between worker threads and shards). */
export interface LoadPlan {
  readonly model: FixedClientsPlan | OpenSessionsPlan;
  /** How a trace is replayed, when the dataset is one (known only once it is read). */
  readonly trace: TraceReplayPlan;
  /** -p: the closed loop's clients; in either loop also the warmup step's concurrency. */
  readonly clients: number;
  /** -n: exact total of requests; undefined for no limit. */
  readonly maxNumRequests?: number;
  /** --max-queue: requests waiting for a --max-concurrency slot at most (more are dropped); undefined for no bound. */
  readonly maxQueue?: number;
  /** Cap on messages per conversation. */
  readonly maxTurns?: number;
  readonly warmupStep: boolean;
  /** Seeds every random choice of the load (clients, arrivals, think times, retries). */
  readonly seed: number;
  /** Requests the run is known to have in flight at most; 0 when unknown (an uncapped open loop). */
  readonly peakConcurrency: number;
  /** Connections the client's pool needs so that no request ever waits inside it. */
  readonly connections: number;
}

/** The request template: what every request carries besides its messages, and how a turn's answer is used. */
export interface RequestPlan {
  /** --endpoint: which API the requests go to. */
  readonly endpoint: Endpoint;
  /** --responses-state: with the Responses API, whether each turn sends the whole history or previous_response_id. */
  readonly responsesState: 'input' | 'server';
  readonly stream: boolean;
  /** max_tokens: a number, `recorded` (the recorded answer's length, none without one), or undefined for none. */
  readonly maxTokens: number | 'recorded' | undefined;
  /** min_tokens, only when the user limited it (not every server accepts the field). */
  readonly minTokens?: number;
  readonly ignoreEos: boolean;
  readonly temperature?: number;
  readonly extraBody?: Readonly<Record<string, unknown>>;
  readonly sendConversationId: boolean;
  /** Retries of a retryable failure. */
  readonly maxRetries: number;
  readonly replayDatasetAnswers: boolean;
  /** --keep-reasoning: the server's reasoning goes back into the history with its answer. */
  readonly keepReasoning: boolean;
  readonly verifyOutput: boolean;
  /**
   * Set after engine detection, not by an option: the server leaves `prompt_tokens_details` out of a usage whose cached
   * tokens are 0 (NVIDIA Dynamo), so a usage without them reads as 0 cached (benchmark/engine-habits.ts).
   */
  readonly zeroCachedOmitted?: boolean;
}

/** The API requests go to: /v1/chat/completions, /v1/responses or /v1/completions. */
export type Endpoint = 'chat' | 'responses' | 'completions';

/** The three per-request timeouts, in ms, named as the client takes them. */
export interface RequestDeadlines {
  readonly requestTimeoutMs: number;
  /** Undefined: the request timeout. */
  readonly ttftTimeoutMs?: number;
  /** Undefined: the request timeout. */
  readonly idleTimeoutMs?: number;
}

/** Every deadline of the run, in ms, validated positive (or >= 0 where 0 means none). */
export interface DeadlinesPlan {
  readonly request: RequestDeadlines;
  /** Hard deadline of the whole run: in-flight requests are aborted. */
  readonly benchmarkMs: number;
  /** Soft stop: no new turns after it. */
  readonly durationMs?: number;
  /** How long to wait for GET /v1/models before starting. */
  readonly readyMs: number;
  /** After a stop signal, how long in-flight requests may finish. */
  readonly stopGraceMs: number;
}

/** The expected-cache model (issue #13): its block size and, when given, its KV capacity. */
export interface ExpectedCachePlan {
  /** Tokens per block (--cache-block-size); undefined: the server's (server-engine/cache-semantics.ts). */
  readonly blockSize?: number;
  /** --kv-cache-tokens; undefined: the server's capacity when its /metrics says it, else infinite. */
  readonly capacityTokens?: number;
}

/** What the summaries are made of. */
export interface SummaryPlan {
  /** --goodput SLOs, parsed; undefined for none. */
  readonly goodput?: Slos;
  /** A summary per value, each dropping that first share of requests. */
  readonly warmupPercentages: readonly number[];
  /** Exit 1 when the share of failed requests exceeds this. */
  readonly maxErrorRate: number;
  /** --percentile-metrics and --metric-percentiles: the extra flat keys p<N>_<metric>_ms of results.json. */
  readonly percentileMetrics: readonly ('ttft' | 'tpot' | 'itl' | 'e2el')[];
  readonly metricPercentiles: readonly number[];
}

/** The files a run writes. */
export interface OutputsPlan {
  /** Undefined: ./chatload-results/<UTC timestamp>. */
  readonly outputDir?: string;
  readonly outputFile?: string;
  /** --overwrite: replace a previous run in the output folder instead of refusing it. */
  readonly overwrite: boolean;
  /** --resume: continue the run in the output folder (store/resume-state.ts). */
  readonly resume: boolean;
  /** --generate-only: write the dataset and send nothing. */
  readonly generateOnly: boolean;
  readonly statsJsonOutput?: string;
  readonly report: boolean;
  /** false, true (the default file name) or a file. */
  readonly excel: boolean | string;
  readonly csv: boolean | string;
  /** --llmd-report: llm-d-benchmark's report (BR v0.2) to this file. */
  readonly llmdReport?: string;
  /** --metrics-port: serve live Prometheus metrics on 127.0.0.1:port while the run runs (0: a free port). */
  readonly metricsPort?: number;
}

/** Past one core and past one machine. */
export interface ScalePlan {
  readonly workers: number | 'auto';
  readonly shard?: Shard;
  /** --start-at as epoch ms. */
  readonly startAtEpochMs?: number;
}

/** The built-in simulator a run without --url starts. */
export interface SimulatorPlan {
  readonly profile: string;
  readonly faults: readonly FaultRule[];
  readonly seed: number;
  /** Replicas behind the simulator's router (issue #31). */
  readonly replicas: number;
  readonly router: RouterKind;
}

/** The validated, normalized run, organized by part. Frozen (`config` and `extraBody` only at their top level). */
export interface RunPlan {
  readonly target: TargetPlan;
  readonly dataset: DatasetPlan;
  readonly load: LoadPlan;
  readonly request: RequestPlan;
  readonly deadlines: DeadlinesPlan;
  readonly summary: SummaryPlan;
  readonly expectedCache: ExpectedCachePlan;
  readonly outputs: OutputsPlan;
  readonly scale: ScalePlan;
  readonly simulator: SimulatorPlan;
  /** The options as given, with their defaults, secrets included: what results.json records (redacted). */
  readonly config: Readonly<Record<string, unknown>>;
  /** The keys of `config` whose values are defaults (chatload's, or the built-in demo's), not the caller's. */
  readonly defaulted: readonly string[];
  /** Warnings about options given that do less than they say (optionNotes): the run says them at its start. */
  readonly notes: readonly string[];
}

const ms = (seconds: number): number => seconds * 1000;
const msOrUndefined = (seconds: number | undefined): number | undefined => (seconds === undefined ? undefined : seconds * 1000);

/** The load model the options select: --session-rate or --ramp-up select open-loop sessions, else the closed loop. */
function loadModelOf(o: RunOptions): LoadPlan['model'] {
  if (!isOpenLoop(o)) {
    return {
      type: 'fixed-clients',
      numClients: o.numClients,
      maxActiveConversations: o.maxActiveConversations ?? o.numClients,
      sampling: o.conversationSampling,
      requestRatePerSec: o.requestRate,
      earlyStop: o.earlyStop,
    };
  }
  const ramp = o.rampUp;
  return {
    type: 'open-sessions',
    // The schema checked that a ramp ends at --session-rate when both are given.
    arrivals: { ratePerSec: ramp?.endPerSec ?? o.sessionRate!, burstiness: o.burstiness, rampUp: ramp && { startPerSec: ramp.startPerSec, seconds: ramp.seconds } },
    maxConcurrency: o.maxConcurrency,
    thinkTimeSec: o.thinkTime,
  };
}

/** Every plan planOf made: so that a plan handed back in is told from options without a brand on it. */
const plans = new WeakSet<object>();

/** True when `value` is a RunPlan that planOf made (in this thread). */
export function isRunPlan(value: unknown): value is RunPlan {
  return typeof value === 'object' && value !== null && plans.has(value);
}

/** The plan of validated options; `config` is what results.json records (the options as given). */
export function planOf(o: RunOptions, config: Readonly<Record<string, unknown>>, extra: { defaulted?: readonly string[]; notes?: readonly string[] } = {}): RunPlan {
  const model = loadModelOf(o);
  const open = model.type === 'open-sessions';
  const plan: RunPlan = deepFreeze({
    target: {
      url: o.url,
      model: o.model,
      servedModelName: o.servedModelName,
      apiKey: o.apiKey,
      headers: o.headers,
      resetPrefixCache: o.resetPrefixCache,
      scrapeMetrics: Array.isArray(o.scrapeMetrics) ? o.scrapeMetrics[0]! : o.scrapeMetrics,
      scrapePages: Array.isArray(o.scrapeMetrics) && o.scrapeMetrics.length > 1 ? o.scrapeMetrics : [],
      replicaHeader: o.replicaHeader?.toLowerCase(),
      scrapeIntervalMs: ms(o.scrapeIntervalSec),
    },
    dataset: {
      inputFile: o.inputFile,
      seed: o.seed,
      allowInvalidUtf8: o.allowInvalidUtf8,
      tokenizer: { tokenizer: o.tokenizer, model: o.model, trustRemoteCode: o.trustRemoteCode },
      trace: { format: o.inputFormat, blockSize: o.traceBlockSize, window: o.traceWindow, filter: o.traceFilter },
      hf: { columns: o.columns, split: o.split },
    },
    load: {
      model,
      trace: { speed: o.traceSpeed, maxConcurrency: o.maxConcurrency },
      clients: o.numClients,
      maxNumRequests: o.maxNumRequests,
      maxQueue: o.maxQueue,
      maxTurns: o.maxTurns,
      warmupStep: o.warmupStep,
      seed: o.seed,
      peakConcurrency: open ? (o.maxConcurrency ?? 0) : o.numClients,
      // An uncapped open loop has no known peak: a generous pool, so that no request waits inside it.
      connections: open ? (o.maxConcurrency ?? 4096) : o.numClients,
    },
    request: {
      endpoint: o.endpoint,
      responsesState: o.responsesState,
      stream: o.stream,
      // The reference's --limit-max-tokens: negative = none, 0 = the recorded answer's length, else the value.
      maxTokens: o.limitMaxTokens < 0 ? undefined : o.limitMaxTokens === 0 ? 'recorded' : o.limitMaxTokens,
      minTokens: o.limitMinTokens > 0 ? o.limitMinTokens : undefined,
      ignoreEos: o.ignoreEos,
      temperature: o.temperature,
      extraBody: o.extraBody && Object.freeze({ ...o.extraBody }),
      sendConversationId: o.sendConversationId,
      maxRetries: o.maxRetries,
      replayDatasetAnswers: o.replayDatasetAnswers,
      keepReasoning: o.keepReasoning,
      verifyOutput: o.verifyOutput,
    },
    deadlines: {
      request: { requestTimeoutMs: ms(o.requestTimeoutSec), ttftTimeoutMs: msOrUndefined(o.ttftTimeoutSec), idleTimeoutMs: msOrUndefined(o.idleTimeoutSec) },
      benchmarkMs: ms(o.benchmarkTimeoutSec),
      durationMs: msOrUndefined(o.durationSec),
      readyMs: ms(o.readyTimeoutSec),
      stopGraceMs: ms(o.stopGraceSec),
    },
    summary: {
      goodput: o.goodput,
      warmupPercentages: o.warmupPercentages,
      maxErrorRate: o.maxErrorRate,
      percentileMetrics: o.percentileMetrics,
      metricPercentiles: o.metricPercentiles,
    },
    expectedCache: { blockSize: o.cacheBlockSize, capacityTokens: o.kvCacheTokens },
    outputs: { outputDir: o.outputDir, outputFile: o.outputFile, overwrite: o.overwrite, resume: o.resume, generateOnly: o.generateOnly, statsJsonOutput: o.statsJsonOutput, report: o.report, excel: o.excelOutput, csv: o.csv, llmdReport: o.llmdReport, metricsPort: o.metricsPort },
    scale: { workers: o.workers, shard: o.shard, startAtEpochMs: o.startAt },
    simulator: { profile: o.simProfile, faults: o.simFaults ?? [], seed: o.seed, replicas: o.simReplicas, router: o.simRouter },
    config,
    defaulted: extra.defaulted ?? [],
    notes: [...(extra.notes ?? [])],
  });
  plans.add(plan);
  return plan;
}

/** Validates, defaults and plans a run (library users and the CLI alike). Throws one ConfigError that lists every problem. */
export function planRun(input: RunOptionsInput): RunPlan {
  const check = checkRunOptions(input);
  if (!check.ok) throw optionsError(check.problems.map((p) => formatProblem(p)));
  return planOf(check.options, check.given, { defaulted: check.defaulted, notes: check.notes });
}

/** Values that may still be the caller's own objects (zod copies only the outer level): frozen shallowly, never deeply. */
const CALLERS = new Set(['config', 'extraBody']);

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const [key, inner] of Object.entries(value)) {
      if (!CALLERS.has(key)) deepFreeze(inner);
    }
  }
  return value;
}
