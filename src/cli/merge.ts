import type { Command } from 'commander';
import { mergeRuns } from '../benchmark/merge.js';

/** Adds `chatload merge DIR... -o OUT`. */
export function registerMergeCommand(program: Command): void {
  program
    .command('merge')
    .description('Combine the results folders of shards (--shard I/N) into one results folder: every record on one clock, exact percentiles, summed conversation counts, and the report.')
    .argument('<dirs...>', 'results folders to merge')
    .requiredOption('-o, --output-dir <dir>', 'folder for the merged requests.jsonl, results.json and report.html')
    .action(async (dirs: string[], flags: { outputDir: string }) => {
      const result = await mergeRuns(dirs, flags.outputDir);
      process.stdout.write(`merged ${result.records} records from ${result.runs} runs into ${result.outputDir}\n`);
    });
}
