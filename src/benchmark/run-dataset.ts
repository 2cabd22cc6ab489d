import { join } from 'node:path';
import { demoConversations } from '../conversation/demo.js';
import { loadDataset } from '../conversation/load.js';
import type { Conversation } from '../conversation/types.js';
import { writeConversations } from '../conversation/write.js';
import type { DatasetPlan, RunPlan } from '../options/run-plan.js';
import { datasetStats, formatStats } from '../synth/dataset-stats.js';
import type { TokenCounter } from '../tokenizer/index.js';
import { resolveTokenCounter } from '../tokenizer/resolve.js';
import { defaultOutputDir, prepareOutputDir } from '../store/output-dir.js';

/** A run's dataset, loaded: its conversations, where they came from, and the generator's statistics when it ran. */
export interface RunDataset {
  conversations: Conversation[];
  source: string;
  stats?: string;
}

/** The run's dataset: the -i file (conversations, JSONL, ShareGPT, or a generation config generated in memory) or the demo. */
export async function loadRunDataset(dataset: DatasetPlan, counter: TokenCounter, warn: (message: string) => void): Promise<RunDataset> {
  if (dataset.inputFile === undefined) return { conversations: demoConversations({ seed: dataset.seed }), source: 'built-in demo' };
  const loaded = await loadDataset(dataset.inputFile, { seed: dataset.seed, counter, warn, allowInvalidUtf8: dataset.allowInvalidUtf8 });
  const stats = loaded.printStats ? formatStats(datasetStats(loaded.conversations, counter.tokenizer)) : undefined;
  return { conversations: loaded.conversations, source: dataset.inputFile, stats };
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
  await writeConversations(file, dataset.conversations);
  return { ...dataset, file };
}
