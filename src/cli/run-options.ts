import { Option, type Command } from 'commander';
import type { RunOptionsInput } from '../options/run-options.js';
import { collect, integer, jsonObject, nonNegativeNumber, percentList, positiveInt, positiveNumber } from './parse.js';

/** The flags of `chatload run` (and `sweep`), as commander parses them. Names follow the reference tool. */
export interface RunFlags {
  inputFile?: string;
  outputFile?: string;
  outputDir?: string;
  seed: number;
  model?: string;
  tokenizer?: string;
  servedModelName?: string;
  url?: string;
  apiKey?: string;
  header: string[];
  numClients?: number;
  maxActiveConversations?: number;
  maxNumRequests?: number;
  maxTurns?: number;
  earlyStop?: boolean;
  warmupStep?: boolean;
  warmupPercentages: number[];
  limitMinTokens: number;
  limitMaxTokens: number;
  requestRate: number;
  maxRetries?: number;
  conversationSampling: 'round_robin' | 'random';
  verifyOutput?: boolean;
  requestTimeoutSec: number;
  ttftTimeoutSec?: number;
  idleTimeoutSec?: number;
  benchmarkTimeoutSec: number;
  duration?: number;
  readyTimeoutSec: number;
  stopGraceSec: number;
  stream: boolean;
  sendConversationId?: boolean;
  replayDatasetAnswers?: boolean;
  ignoreEos?: boolean;
  temperature?: number;
  extraBody?: Record<string, unknown>;
  maxErrorRate: number;
  sessionRate?: number;
  burstiness: number;
  rampUp?: string;
  maxConcurrency?: number;
  thinkTime?: string;
  goodput?: string[];
  scrapeMetrics?: boolean | string;
  scrapeIntervalSec: number;
  resetPrefixCache?: boolean;
  excelOutput?: boolean | string;
  csv?: boolean | string;
  report: boolean;
  workers: number | 'auto';
  shard?: string;
  startAt?: string;
  statsJsonOutput?: string;
  quiet?: boolean;
  verbose?: boolean;
  printContent?: boolean;
  trustRemoteCode?: boolean;
  simProfile: string;
  simFaults?: string;
}

export function flagsToRunOptions(flags: RunFlags, env: NodeJS.ProcessEnv): RunOptionsInput {
  const envRetries = env.MULTITURN_BENCH_MAX_RETRIES;
  return {
    inputFile: flags.inputFile,
    outputFile: flags.outputFile,
    outputDir: flags.outputDir,
    statsJsonOutput: flags.statsJsonOutput,
    seed: flags.seed,
    model: flags.model,
    tokenizer: flags.tokenizer,
    trustRemoteCode: flags.trustRemoteCode ?? false,
    servedModelName: flags.servedModelName,
    url: flags.url,
    apiKey: flags.apiKey ?? (env.OPENAI_API_KEY || undefined),
    headers: flags.header,
    numClients: flags.numClients,
    maxActiveConversations: flags.maxActiveConversations,
    maxNumRequests: flags.maxNumRequests,
    maxTurns: flags.maxTurns,
    earlyStop: flags.earlyStop,
    warmupStep: flags.warmupStep ?? false,
    warmupPercentages: flags.warmupPercentages,
    limitMinTokens: flags.limitMinTokens,
    limitMaxTokens: flags.limitMaxTokens,
    requestRate: flags.requestRate,
    maxRetries: flags.maxRetries ?? (envRetries !== undefined && /^\d+$/.test(envRetries) ? Number(envRetries) : 0),
    conversationSampling: flags.conversationSampling,
    requestTimeoutSec: flags.requestTimeoutSec,
    ttftTimeoutSec: flags.ttftTimeoutSec,
    idleTimeoutSec: flags.idleTimeoutSec,
    benchmarkTimeoutSec: flags.benchmarkTimeoutSec,
    durationSec: flags.duration,
    readyTimeoutSec: flags.readyTimeoutSec,
    stopGraceSec: flags.stopGraceSec,
    stream: flags.stream,
    sendConversationId: flags.sendConversationId ?? false,
    replayDatasetAnswers: flags.replayDatasetAnswers ?? false,
    verifyOutput: flags.verifyOutput ?? false,
    ignoreEos: flags.ignoreEos ?? false,
    temperature: flags.temperature,
    extraBody: flags.extraBody,
    maxErrorRate: flags.maxErrorRate,
    sessionRate: flags.sessionRate,
    burstiness: flags.burstiness,
    rampUp: flags.rampUp,
    maxConcurrency: flags.maxConcurrency,
    thinkTime: flags.thinkTime,
    goodput: flags.goodput,
    scrapeMetrics: flags.scrapeMetrics ?? false,
    scrapeIntervalSec: flags.scrapeIntervalSec,
    resetPrefixCache: flags.resetPrefixCache ?? false,
    report: flags.report,
    workers: flags.workers,
    shard: flags.shard ?? shardFromEnv(env),
    startAt: flags.startAt,
    excelOutput: flags.excelOutput ?? false,
    csv: flags.csv ?? false,
    simProfile: flags.simProfile,
    simFaults: flags.simFaults,
  };
}

/** A Kubernetes Indexed Job gives each pod JOB_COMPLETION_INDEX; CHATLOAD_SHARD_COUNT (the Job's completions) says of how many. */
function shardFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const index = env.JOB_COMPLETION_INDEX;
  const count = env.CHATLOAD_SHARD_COUNT;
  return index !== undefined && count !== undefined && index !== '' && count !== '' ? `${index}/${count}` : undefined;
}

function workersValue(value: string): number | 'auto' {
  return value === 'auto' ? 'auto' : positiveInt(value);
}

/** Adds every `chatload run` option to `command` (shared by run and sweep, so both accept the same flags). */
export function addRunOptions(command: Command): Command {
  return command
    .option('-i, --input-file <path>', 'conversations: the reference JSON list or JSONL (default: the built-in demo dataset)')
    .option('-o, --output-file <path>', 'write the finished conversations with the server\'s answers (reference format)')
    .option('--output-dir <dir>', 'folder for requests.jsonl and results.json (default: ./chatload-results/<UTC timestamp>)')
    .option('--seed <n>', 'seed of every random choice', integer, 0)
    .option('-m, --model <name>', 'model name (default: the first id from GET /v1/models)')
    .option('--tokenizer <spec>', 'token counting: a tokenizer.json or model folder, a Hugging Face model id, tiktoken:cl100k_base|o200k_base, or approx (default: the tokenizer of -m when it resolves locally, else approx)')
    .option('--served-model-name <name>', 'model name sent in requests, when it differs from --model')
    .option('-u, --url <url>', 'base URL of the server, e.g. http://localhost:8000 (default: start the built-in simulator)')
    .addOption(new Option('--api-key <key>', 'API key, sent as a Bearer token; never written anywhere').env('OPENAI_API_KEY'))
    .option('--header <line>', "extra request header 'Name: value' or 'Name=value' (repeatable)", collect, [])
    .option('-p, --num-clients <n>', 'closed-loop clients, one request in flight each (default: 1; 16 for the built-in demo)', positiveInt)
    .option('-k, --max-active-conversations <n>', 'conversations interleaved at a time, spread across clients (default: --num-clients; 32 for the demo)', positiveInt)
    .option('-n, --max-num-requests <n>', 'exact total of requests to send', positiveInt)
    .option('--max-turns <n>', 'cap on messages per conversation, user and assistant together', positiveInt)
    .option('--early-stop', 'stop when the first client runs out of work (the default, except for the built-in demo)')
    .option('--no-early-stop', 'keep going until every conversation is done')
    .option('--warmup-step', 'send the first turn of every conversation first, as unmeasured warmup')
    .option('--warmup-percentages <list>', 'a summary per value, each dropping that first share of requests by start time, e.g. 0%,50%', percentList, [0])
    .option('--limit-min-tokens <n>', 'min_tokens per request: 0 = the recorded answer\'s length, negative = none', integer, 0)
    .option('--limit-max-tokens <n>', 'max_tokens per request: 0 = the recorded answer\'s length, negative = none', integer, 0)
    .option('--request-rate <r>', 'mean requests/s per client (Poisson, on an absolute schedule); 0 = no pause', nonNegativeNumber, 0)
    .option('--max-retries <n>', 'retries of a retryable failure, with exponential backoff honouring Retry-After (env MULTITURN_BENCH_MAX_RETRIES)', integer)
    .addOption(new Option('--conversation-sampling <how>', 'which active conversation a client sends next').choices(['round_robin', 'random']).default('round_robin'))
    .option('--verify-output', 'count answers that differ from the dataset\'s recorded answers')
    .option('--request-timeout-sec <s>', 'total time allowed for one request', positiveNumber, 120)
    .option('--ttft-timeout-sec <s>', 'time allowed until the first token (default: the request timeout)', positiveNumber)
    .option('--idle-timeout-sec <s>', 'silence allowed between chunks (default: the request timeout)', positiveNumber)
    .option('--benchmark-timeout-sec <s>', 'hard deadline for the whole run: in-flight requests are aborted', positiveNumber, 3600)
    .option('--duration <s>', 'soft stop after this many seconds: no new turns, in-flight requests finish', positiveNumber)
    .option('--stop-grace-sec <s>', 'after Ctrl-C or SIGTERM, how long in-flight requests may finish before they are aborted', nonNegativeNumber, 3)
    .option('--ready-timeout-sec <s>', 'wait this long for GET /v1/models to answer before starting', nonNegativeNumber, 60)
    .option('--no-stream', 'ask for non-streaming responses')
    .option('--send-conversation-id', 'send body conversation_id and header X-Session-ID')
    .option('--replay-dataset-answers', 'put the recorded answers into the history instead of the server\'s')
    .option('--ignore-eos', 'send ignore_eos: true')
    .option('--temperature <t>', 'sampling temperature to send', nonNegativeNumber)
    .option('--extra-body <json>', 'JSON object merged into every request body', jsonObject)
    .option('--session-rate <r>', 'open loop: new conversations per second (gamma arrivals, see --burstiness); replaces the closed loop', positiveNumber)
    .option('--burstiness <k>', 'open loop: gamma shape of inter-arrival times; 1 = Poisson, < 1 burstier', positiveNumber, 1)
    .option('--ramp-up <spec>', 'open loop: linear:START:END:SECONDS ramps the session rate, then holds END')
    .option('--max-concurrency <n>', 'open loop: requests in flight at most; time waiting for a slot is recorded as queue time', positiveInt)
    .option('--think-time <dist>', 'open loop: pause before each next turn, seconds: a distribution, e.g. exponential:5 or uniform:2:8 (default: the dataset\'s per-turn values, else none)')
    .option('--goodput <slo...>', 'SLOs for goodput, e.g. ttft:500 tpot:50 e2el:10000 (ms)')
    .option('--scrape-metrics [url]', 'read the server\'s Prometheus /metrics before, during and after the run (default URL: <url>/metrics)')
    .option('--scrape-interval-sec <s>', 'seconds between /metrics scrapes during the run', positiveNumber, 5)
    .option('--reset-prefix-cache', 'POST /reset_prefix_cache before the run so it starts cold (vLLM needs VLLM_SERVER_DEV_MODE=1)')
    .option('--max-error-rate <fraction>', 'exit 1 when the share of failed requests exceeds this', nonNegativeNumber, 0)
    .option('-e, --excel-output [file]', 'also write the Excel workbook (Summary, Raw data, Per turn); default file: report.xlsx in the output folder')
    .option('--csv [file]', 'also write the per-request records as CSV; default file: requests.csv in the output folder')
    .option('--no-report', 'do not write report.html')
    .option('--shard <i/n>', 'run shard I of N (0-based) of a multi-machine run: conversations i with i % N == I, and 1/N of -p, -k, -n and the session rate (default: from JOB_COMPLETION_INDEX and CHATLOAD_SHARD_COUNT when both are set)')
    .option('--start-at <time>', 'wall-clock start barrier for shards: an ISO 8601 time or epoch seconds; nothing is sent before it')
    .option('--workers <n>', 'worker threads, each with its own event loop and connection pool: a number, or auto (one loop below 512 concurrent requests or with the built-in simulator, else one per core)', workersValue, 'auto')
    .option('--stats-json-output <file>', 'also write the reference\'s per-request stats list to this file')
    .option('-q, --quiet', 'no progress line and no status lines')
    .option('-v, --verbose', 'print a line per request to stderr')
    .option('--print-content', 'print each user message and answer to stderr')
    .option('--trust-remote-code', 'accepted for compatibility (no effect: chatload never runs remote code)')
    .option('--sim-profile <name>', 'profile of the built-in simulator when there is no --url', 'demo')
    .option('--sim-faults <spec>', 'fault injection of the built-in simulator, e.g. 500=0.01,429=0.02');
}
