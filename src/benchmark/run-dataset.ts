import { join } from 'node:path';
import { demoConversations } from '../conversation/demo.js';
import { loadDataset } from '../conversation/load.js';
import type { Conversation } from '../conversation/types.js';
import { writeConversations } from '../conversation/write.js';
import { requestsHeld } from '../load/active-conversation.js';
import { tracePromptConversations } from './trace-prompts.js';
import { ConfigError } from '../errors/index.js';
import { optionsError } from '../options/run-options.js';
import type { DatasetPlan, LoadPlan, RunPlan } from '../options/run-plan.js';
import { datasetStats, formatStats } from '../synth/dataset-stats.js';
import { audioPartCount, imagePartCount, type TokenCounter } from '../tokenizer/index.js';
import { resolveTokenCounter } from '../tokenizer/resolve.js';
import { defaultOutputDir, prepareOutputDir } from '../store/output-dir.js';

/** A run's dataset, loaded: its conversations, where they came from, and the generator's statistics when it ran. */
export interface RunDataset {
  conversations: Conversation[];
  source: string;
  stats?: string;
  /** True for a production trace (Mooncake, Bailian, Azure, BurstGPT): it is replayed at its timestamps. */
  traced?: boolean;
  /** True for a CSV trace (Azure, BurstGPT): the one --trace-filter applies to. */
  csvTrace?: boolean;
}

/**
 * The run's load once the dataset is known: a trace is replayed at its timestamps, an open loop, so the client's pool
 * gets a connection per request it may have in flight (--max-concurrency, or a generous pool when uncapped), as for
 * open-loop sessions. --max-concurrency with a closed loop over a dataset that is no trace is refused.
 */
export function loadForDataset(load: LoadPlan, datasetPlan: DatasetPlan, dataset: RunDataset): LoadPlan {
  const cap = load.trace.maxConcurrency;
  if (datasetPlan.trace.filter !== undefined && dataset.csvTrace !== true) {
    throw optionsError([`--trace-filter: applies to Azure and BurstGPT traces (CSV), and the dataset (${dataset.source}) is none`]);
  }
  if (!dataset.traced) {
    // The trace's own options would change nothing: said so (issue #35), one line naming every one given.
    const noTrace = `applies to trace replay, and the dataset (${dataset.source}) is no trace`;
    const problems = [
      ...(load.model.type === 'fixed-clients' && cap !== undefined ? [`--max-concurrency: applies to open-loop sessions and trace replay, and ${dataset.source} is no trace: add --session-rate (or --ramp-up)`] : []),
      ...(load.trace.speed !== 1 ? [`--trace-speed: ${noTrace}`] : []),
      ...(datasetPlan.trace.window !== undefined ? [`--trace-window: ${noTrace}`] : []),
      ...(datasetPlan.trace.blockSize !== undefined ? [`--trace-block-size: ${noTrace}`] : []),
    ];
    if (problems.length > 0) throw optionsError(problems);
    return load;
  }
  return { ...load, peakConcurrency: cap ?? 0, connections: cap ?? 4096 };
}

/**
 * -p given with a trace replay, said at the start as with --session-rate (optionNotes): the trace's timestamps are the
 * load, so -p sizes only the warmup step, if any. Known only once the dataset is read.
 */
export function warnClientsWithTrace(load: LoadPlan, dataset: RunDataset, clientsGiven: boolean, warn: (message: string) => void): void {
  if (dataset.traced !== true || !clientsGiven) return;
  const what = load.warmupStep ? "sets only --warmup-step's concurrency" : 'is ignored';
  warn(`-p/--num-clients ${load.clients} ${what} with a trace replay: the trace's timestamps are the load (--max-concurrency caps the requests in flight)`);
}

/**
 * -n past what the dataset holds, said at the start (issue #34: it read as a promise of -n requests). The run then
 * ends when the dataset is used up (early stop waits for -n: docs/LOAD-MODELS.md).
 */
export function warnBudgetPastDataset(load: LoadPlan, dataset: RunDataset, warn: (message: string) => void): void {
  const n = load.maxNumRequests;
  if (n === undefined) return;
  const held = requestsHeld(dataset.conversations, load.maxTurns, load.warmupStep);
  if (n > held) warn(`-n ${n}, but the dataset holds ${held} requests${load.warmupStep ? ' after the warmup step' : ''}: the run ends when they are sent`);
}

/** The run's dataset: the -i file (conversations, JSONL, ShareGPT, or a generation config generated in memory) or the demo. */
export async function loadRunDataset(dataset: DatasetPlan, counter: TokenCounter, warn: (message: string) => void): Promise<RunDataset> {
  if (dataset.inputFile === undefined) return { conversations: demoConversations({ seed: dataset.seed }), source: 'built-in demo' };
  const loaded = await loadDataset(dataset.inputFile, { seed: dataset.seed, counter, warn, allowInvalidUtf8: dataset.allowInvalidUtf8, trace: dataset.trace, hf: dataset.hf });
  const stats = loaded.printStats ? formatStats(datasetStats(loaded.conversations, counter.tokenizer)) : undefined;
  const traced = loaded.conversations.some((c) => c.trace !== undefined);
  return { conversations: loaded.conversations, source: dataset.inputFile, stats, traced, csvTrace: loaded.csvTrace !== undefined };
}

/** Image parts in the dataset's messages. */
export function countImageParts(conversations: readonly Conversation[]): number {
  let images = 0;
  for (const c of conversations) for (const m of c.messages) images += imagePartCount(m.content);
  return images;
}

/** Audio parts (`input_audio`) in the dataset's messages. */
export function countAudioParts(conversations: readonly Conversation[]): number {
  let audio = 0;
  for (const c of conversations) for (const m of c.messages) audio += audioPartCount(m.content);
  return audio;
}

/**
 * What a dataset with images or audio means for the run: `--endpoint completions` cannot send either, nor
 * `--endpoint responses` audio (OpenAI's Responses API takes no `input_audio`: docs/DATASETS.md), each a ConfigError;
 * and local token counts leave them out (the warning says so; the terminal and the HTML report show it with the
 * run's warnings).
 */
export function checkDatasetMedia(media: { images: number; audio: number }, endpoint: RunPlan['request']['endpoint'], warn: (message: string) => void): void {
  const { images, audio } = media;
  if (endpoint === 'completions' && images > 0) {
    throw new ConfigError(`the dataset has ${images} image parts, which --endpoint completions cannot send (its prompt is text): use --endpoint chat or responses`);
  }
  if (endpoint !== 'chat' && audio > 0) {
    const why = endpoint === 'completions' ? 'its prompt is text' : "the Responses API takes no input_audio parts";
    throw new ConfigError(`the dataset has ${audio} audio parts, which --endpoint ${endpoint} cannot send (${why}): use --endpoint chat`);
  }
  if (images > 0) {
    warn(
      `the dataset has ${images} image parts: local token counts leave images out (input tokens when the server reports no usage, ` +
        `and the expected cache then); the server's usage counts them`,
    );
  }
  if (audio > 0) {
    warn(
      `the dataset has ${audio} audio parts: local token counts leave audio out (input tokens when the server reports no usage, ` +
        `and the expected cache then); the server's usage counts them`,
    );
  }
}

/**
 * `run --generate-only` (the reference rewrite's flag): builds the run's dataset exactly as the run would (a
 * generation config is generated with the run's seed and tokenizer) and writes it, without contacting any server.
 * Written to -o when given, else to conversations.json in the output folder.
 */
export async function writeRunDataset(plan: RunPlan, warn: (message: string) => void): Promise<RunDataset & { file: string }> {
  const counter = await resolveTokenCounter({ ...plan.dataset.tokenizer, warn });
  const dataset = await loadRunDataset(plan.dataset, counter, warn);
  let file = plan.outputs.outputFile;
  if (file === undefined) {
    file = join(prepareOutputDir(plan.outputs.outputDir ?? defaultOutputDir()), 'conversations.json');
  }
  // A trace's prompts are made at send time: written out here as the replay would make them.
  const conversations = dataset.traced === true ? tracePromptConversations(dataset.conversations, counter.tokenizer, plan.dataset.seed) : dataset.conversations;
  await writeConversations(file, conversations);
  return { ...dataset, conversations, file };
}
