import type { Command } from 'commander';
import { Option } from 'commander';
import { runBenchmark, type BenchmarkStartInfo } from '../benchmark/run-benchmark.js';
import { ExitCode } from '../errors/index.js';
import type { RunOptionsInput } from '../options/run-options.js';
import { ProgressLine } from '../report/progress.js';
import { formatSummary } from '../report/terminal.js';
import { collect, integer, jsonObject, nonNegativeNumber, percentList, positiveInt, positiveNumber } from './parse.js';
import { onStopSignals } from './signals.js';

/** The flags of `chatload run`, as commander parses them. Names follow the reference tool. */
interface RunFlags {
  inputFile?: string;
  outputFile?: string;
  outputDir?: string;
  seed: number;
  model?: string;
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
  excelOutput?: boolean;
  statsJsonOutput?: string;
  quiet?: boolean;
  verbose?: boolean;
  printContent?: boolean;
  trustRemoteCode?: boolean;
  simProfile: string;
  simFaults?: string;
}

function toOptions(flags: RunFlags, env: NodeJS.ProcessEnv): RunOptionsInput {
  const envRetries = env.MULTITURN_BENCH_MAX_RETRIES;
  return {
    inputFile: flags.inputFile,
    outputFile: flags.outputFile,
    outputDir: flags.outputDir,
    statsJsonOutput: flags.statsJsonOutput,
    seed: flags.seed,
    model: flags.model,
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
    simProfile: flags.simProfile,
    simFaults: flags.simFaults,
  };
}

function describeStart(info: BenchmarkStartInfo): string {
  const server = info.embeddedSimulator ? `the built-in simulator at ${info.url}` : info.url;
  return `chatload: ${info.conversations} conversations from ${info.dataset} against ${server}, model ${info.model}; results in ${info.outputDir}\n`;
}

/** Adds `chatload run`. `setExitCode` receives the run's exit code (0 ok, 1 errors over --max-error-rate, 130 interrupted). */
export function registerRunCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('run')
    .description('Replay multi-turn conversations against an OpenAI-compatible server and measure it. Without --url, runs the built-in simulator.')
    .option('-i, --input-file <path>', 'conversations: the reference JSON list or JSONL (default: the built-in demo dataset)')
    .option('-o, --output-file <path>', 'write the finished conversations with the server\'s answers (reference format)')
    .option('--output-dir <dir>', 'folder for requests.jsonl and results.json (default: ./chatload-results/<UTC timestamp>)')
    .option('--seed <n>', 'seed of every random choice', integer, 0)
    .option('-m, --model <name>', 'model name (default: the first id from GET /v1/models)')
    .option('--served-model-name <name>', 'model name sent in requests, when it differs from --model')
    .option('-u, --url <url>', 'base URL of the server, e.g. http://localhost:8000 (default: start the built-in simulator)')
    .addOption(new Option('--api-key <key>', 'API key, sent as a Bearer token; never written anywhere').env('OPENAI_API_KEY'))
    .option('--header <line>', "extra request header 'Name: value' (repeatable)", collect, [])
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
    .option('-e, --excel-output', 'Excel output (arrives with the reports issue #6; accepted and ignored for now)')
    .option('--stats-json-output <file>', 'also write the reference\'s per-request stats list to this file')
    .option('-q, --quiet', 'no progress line and no status lines')
    .option('-v, --verbose', 'print a line per request to stderr')
    .option('--print-content', 'print each user message and answer to stderr')
    .option('--trust-remote-code', 'accepted for compatibility (no effect: tokenizers run no remote code)')
    .option('--sim-profile <name>', 'profile of the built-in simulator when there is no --url', 'demo')
    .option('--sim-faults <spec>', 'fault injection of the built-in simulator, e.g. 500=0.01,429=0.02')
    .action(async (flags: RunFlags) => {
      const quiet = flags.quiet ?? false;
      const err = process.stderr;
      const progress = !quiet && err.isTTY ? { line: undefined as ProgressLine | undefined } : undefined;
      const say = (line: string): void => {
        // Clear the live progress line first, so a status line never lands in the middle of it.
        if (!quiet) err.write(progress?.line ? `\r\x1b[2K${line}` : line);
      };
      if (flags.excelOutput) say('chatload: warning: --excel-output arrives with the reports issue (#6); no Excel file is written yet\n');
      const stop = new AbortController();
      const releaseSignals = onStopSignals(() => {
        err.write('\nchatload: stopping: no new requests; in-flight ones get a short grace (Ctrl-C again exits now)\n');
        stop.abort();
      });
      try {
        const result = await runBenchmark(toOptions(flags, process.env), {
          signal: stop.signal,
          onStart: (info) => {
            say(describeStart(info));
            if (progress) progress.line = new ProgressLine(err, { total: flags.maxNumRequests });
          },
          observer: {
            onRecord: (record) => {
              progress?.line?.onRecord(record);
              if (flags.verbose) {
                const what = record.status === 'ok' ? `ttft ${record.ttft_ms} ms, e2el ${record.e2el_ms} ms, ${record.output_num_tokens} tokens` : `${record.error_kind}: ${record.error}`;
                err.write(`${record.conversation_id} turn ${record.turn} (client ${record.client_id}${record.warmup ? ', warmup' : ''}): ${what}\n`);
              }
            },
            onWarning: (message) => say(`chatload: warning: ${message}\n`),
            onContent: flags.printContent
              ? (event) => err.write(`--- ${event.conversationId} turn ${event.turn}\nuser: ${event.user}\nassistant: ${event.answer}\n`)
              : undefined,
          },
        });
        progress?.line?.stop();
        const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
        process.stdout.write(
          `${formatSummary(
            { summary: result.summary, perTurn: result.perTurn, clientHealth: result.clientHealth, conversations: { ...result.engine.conversations }, title: `chatload run: ${result.model} (${result.engine.stopReason})` },
            { color },
          )}\n`,
        );
        const written = Object.values(result.files).join(', ');
        say(`chatload: wrote ${written}\n`);
        if (result.exitCode === ExitCode.runFailed) {
          say(`chatload: ${result.summary.failed} of ${result.summary.completed + result.summary.failed} requests failed, over --max-error-rate ${flags.maxErrorRate}\n`);
        }
        setExitCode(result.exitCode);
      } finally {
        progress?.line?.stop();
        releaseSignals();
      }
    });
}
