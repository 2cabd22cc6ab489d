import type { Command } from 'commander';
import { DEFAULT_MERGE_MAX_RECORDS, mergeRuns } from '../benchmark/merge.js';
import { positiveInt } from './parse.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { counted } from '../util/plural.js';

/** Adds `chatload merge DIR... -o OUT [--max-records N]`. */
export function registerMergeCommand(program: Command): void {
  program
    .command('merge')
    .description(COMMAND_DESCRIPTIONS.merge)
    .addHelpText('after', examplesText('merge'))
    .argument('<dirs...>', 'results folders to merge')
    .requiredOption('-o, --output-dir <dir>', 'folder for the merged requests.jsonl, results.json and report.html')
    .option(
      '--max-records <n>',
      'records (all runs together) up to which the merge loads them all and is exact; above, memory stays bounded: records are streamed, statistics come from histograms (percentiles within 0.1%), and report.html draws its charts from a sample',
      positiveInt,
      DEFAULT_MERGE_MAX_RECORDS,
    )
    .action(async (dirs: string[], flags: { outputDir: string; maxRecords: number }) => {
      const result = await mergeRuns(dirs, flags.outputDir, { maxRecords: flags.maxRecords });
      const mode = result.mode === 'histogram' ? ' (histogram mode: percentiles within 0.1%; see warnings in results.json)' : '';
      process.stdout.write(`merged ${counted(result.records, 'record')} from ${counted(result.runs, 'run')} into ${result.outputDir}${mode}\n`);
    });
}
