import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { loadDataset, writeConversations } from '../conversation/index.js';
import { ConfigError } from '../errors/index.js';
import { datasetStats, formatStats } from '../synth/dataset-stats.js';
import { resolveTokenCounter } from '../tokenizer/index.js';
import { integer } from './parse.js';

/** Flags of `chatload generate`, as commander parses them. */
export interface GenerateFlags {
  inputFile: string;
  outputFile: string;
  seed: number;
  tokenizer?: string;
  model?: string;
  printStats?: boolean;
  trustRemoteCode?: boolean;
}

/**
 * Runs `chatload generate`: reads a `generate_conversations` config, generates its conversations with the resolved
 * tokenizer, writes them (JSON list, or JSONL for `.jsonl`), prints one summary line to stderr and, with
 * `--print-stats` (or `print_stats` in the config), the dataset statistics to stdout.
 */
export async function runGenerate(
  flags: GenerateFlags,
  out: (text: string) => void = (t) => process.stdout.write(t),
  err: (text: string) => void = (t) => process.stderr.write(t),
): Promise<void> {
  const warn = (message: string): void => err(`chatload: warning: ${message}\n`);
  const counter = await resolveTokenCounter({ tokenizer: flags.tokenizer, model: flags.model, trustRemoteCode: flags.trustRemoteCode, warn });
  const started = performance.now();
  const dataset = await loadDataset(flags.inputFile, { counter, seed: flags.seed, warn });
  if (dataset.format !== 'generate' || dataset.generated === undefined) {
    throw new ConfigError(`-i ${flags.inputFile}: not a generation config (expected "filetype": "generate_conversations"); this file is already a dataset (${dataset.format})`);
  }
  const seconds = (performance.now() - started) / 1000;
  await writeConversations(flags.outputFile, dataset.conversations);
  const userTurns = dataset.generated.userTurns.reduce((n, turns) => n + turns.length, 0);
  const tokens = dataset.generated.userTurns.reduce((n, turns) => n + turns.reduce((m, t) => m + t.actual, 0), 0);
  const exactness = dataset.generated.maxDrift === 0 ? 'every user turn exact' : `user turns within ±${dataset.generated.maxDrift} token(s)`;
  err(
    `chatload generate: ${dataset.conversations.length} conversations, ${userTurns} user turns, ${tokens} user tokens ` +
      `(${counter.tokenizer.name}, ${exactness}) in ${seconds.toFixed(2)} s -> ${flags.outputFile}\n`,
  );
  if (flags.printStats === true || dataset.printStats === true) out(`${formatStats(datasetStats(dataset.conversations, counter.tokenizer))}\n`);
}

/** Adds `chatload generate` (the reference's --generate-only). */
export function registerGenerateCommand(program: Command): void {
  program
    .command('generate')
    .description('Generate conversations from a generate_conversations config (the reference format) and write them. See docs/DATASETS.md.')
    .requiredOption('-i, --input-file <file>', 'generation config (JSON, "filetype": "generate_conversations")')
    .requiredOption('-o, --output-file <file>', 'where to write the conversations: .json (the reference list) or .jsonl')
    .option('--seed <n>', 'seed of every random choice', integer, 0)
    .option('--tokenizer <spec>', 'approx, tiktoken:cl100k_base|o200k_base, a tokenizer.json or model folder, or a Hugging Face model id')
    .option('-m, --model <model>', 'model whose tokenizer to use when --tokenizer is not given (local folder or HF cache)')
    .option('--print-stats', 'print the distributions of turns, user, assistant and request tokens')
    .option('--trust-remote-code', 'accepted for compatibility (no effect: tokenizers run no remote code)')
    .action(async (flags: GenerateFlags) => {
      await runGenerate(flags);
    });
}
