import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { loadDataset, writeConversations } from '../conversation/index.js';
import { ConfigError } from '../errors/index.js';
import { datasetStats, formatStats } from '../synth/dataset-stats.js';
import { resolveTokenCounter } from '../tokenizer/index.js';
import * as z from 'zod';
import { addTableOptions, readTableOptions } from '../options/commander.js';
import { fieldsOf, optionsError, problemsOf } from '../options/run-options.js';
import { generateOptions } from '../options/table/generate.js';
import { problemLines } from './run-options.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { prepareOutputFile } from '../store/output-dir.js';
import { counted } from '../util/plural.js';

/** Flags of `chatload generate`, as commander parses them. */
export interface GenerateFlags {
  inputFile: string;
  outputFile: string;
  seed: number;
  tokenizer?: string;
  model?: string;
  printStats?: boolean;
  trustRemoteCode?: boolean;
  allowInvalidUtf8?: boolean;
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
  // -o is proved writable before any work (issue #35): a bad path is a bad flag (exit 2), found in no time.
  prepareOutputFile('-o', flags.outputFile);
  // The server's ids are a run's (its expected cache): generating asks no server.
  if (flags.tokenizer?.trim() === 'server') throw new ConfigError('--tokenizer server: generate talks to no server; give a tokenizer.json, a model folder or id, tiktoken:…, or approx');
  const counter = await resolveTokenCounter({ tokenizer: flags.tokenizer, model: flags.model, trustRemoteCode: flags.trustRemoteCode, warn });
  const started = performance.now();
  const dataset = await loadDataset(flags.inputFile, { counter, seed: flags.seed, warn, allowInvalidUtf8: flags.allowInvalidUtf8 });
  if (dataset.agentic !== undefined) {
    const a = dataset.agentic;
    await writeConversations(flags.outputFile, dataset.conversations);
    const exactness = a.maxDrift === 0 ? 'every message exact' : `messages within ±${a.maxDrift} token(s)`;
    err(
      `chatload generate: ${counted(dataset.conversations.length, 'agentic session')}, ${counted(a.subAgents, 'sub-agent')}, ${counted(a.steps, 'step')}, ` +
        `context up to ${a.maxContextTokens} tokens (${counter.tokenizer.name}, ${exactness}) in ${((performance.now() - started) / 1000).toFixed(2)} s -> ${flags.outputFile}\n`,
    );
    return;
  }
  if (dataset.format !== 'generate' || dataset.generated === undefined) {
    throw new ConfigError(`-i ${flags.inputFile}: not a generation config (expected "filetype": "generate_conversations"); this file is already a dataset (${dataset.format})`);
  }
  const seconds = (performance.now() - started) / 1000;
  await writeConversations(flags.outputFile, dataset.conversations);
  const userTurns = dataset.generated.userTurns.reduce((n, turns) => n + turns.length, 0);
  const tokens = dataset.generated.userTurns.reduce((n, turns) => n + turns.reduce((m, t) => m + t.actual, 0), 0);
  const exactness = dataset.generated.maxDrift === 0 ? 'every user turn exact' : `user turns within ±${dataset.generated.maxDrift} token(s)`;
  err(
    `chatload generate: ${counted(dataset.conversations.length, 'conversation')}, ${counted(userTurns, 'user turn')}, ${counted(tokens, 'user token')} ` +
      `(${counter.tokenizer.name}, ${exactness}) in ${seconds.toFixed(2)} s -> ${flags.outputFile}\n`,
  );
  if (flags.printStats === true || dataset.printStats === true) out(`${formatStats(datasetStats(dataset.conversations, counter.tokenizer))}\n`);
}

const generateSchema = z.object(fieldsOf(generateOptions)).strict();

/** The flags of a parsed `generate` command, validated (one ConfigError with every problem). */
function generateFlags(command: Command): GenerateFlags {
  const given = readTableOptions(command, generateOptions);
  const { values, problems } = given;
  const parsed = generateSchema.safeParse(values);
  const all = [...problems, ...(parsed.success ? [] : problemsOf(parsed.error))];
  if (all.length > 0 || !parsed.success) throw optionsError(problemLines(all, generateOptions, given));
  return { ...parsed.data, inputFile: parsed.data.inputFile!, outputFile: parsed.data.outputFile! };
}

/** Adds `chatload generate` (the reference's --generate-only). */
export function registerGenerateCommand(program: Command): void {
  const command = program
    .command('generate')
    .description(COMMAND_DESCRIPTIONS.generate)
    .addHelpText('after', examplesText('generate'));
  addTableOptions(command, generateOptions);
  command.action(async () => {
    await runGenerate(generateFlags(command));
  });
}
