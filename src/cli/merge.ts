import type { Command } from 'commander';
import { DEFAULT_MERGE_MAX_RECORDS, mergeRuns } from '../benchmark/merge.js';
import { formatWait, shardFolders, waitForShards } from '../benchmark/merge-wait.js';
import { ConfigError } from '../errors/index.js';
import { durationMs, positiveInt } from './parse.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { onStopSignals } from './signals.js';
import { counted } from '../util/plural.js';
import { escapeControl } from '../util/control-chars.js';
import { cacheHitRatesText } from '../report/terminal.js';

interface MergeFlags {
  outputDir: string;
  maxRecords: number;
  expect?: number;
  wait?: number;
}

/** Adds `chatload merge DIR... -o OUT [--max-records N] [--expect N [--wait DURATION]]`. */
export function registerMergeCommand(program: Command): void {
  program
    .command('merge')
    .description(COMMAND_DESCRIPTIONS.merge)
    .addHelpText('after', examplesText('merge'))
    .argument('<dirs...>', "results folders to merge, or patterns with wildcards, quoted ('results/shard-*'), matched by the merge itself")
    .requiredOption('-o, --output-dir <dir>', 'folder for the merged requests.jsonl, results.json and report.html')
    .option(
      '--max-records <n>',
      'records (all runs together) up to which the merge loads them all and is exact; above, memory stays bounded: records are streamed, statistics come from histograms (percentiles within 0.1%), and report.html draws its charts from a sample',
      positiveInt,
      DEFAULT_MERGE_MAX_RECORDS,
    )
    .option('--expect <n>', 'the number of shard folders: merge only when exactly N are complete (results.json, or a crashed run\'s requests.jsonl with no live lock), else exit 1 naming what is missing', positiveInt)
    .option('--wait <duration>', 'with --expect: wait up to this long for the N folders to be complete, looking every second (seconds, or 500ms, 90s, 10m, 2h); SIGINT/SIGTERM end the wait', durationMs)
    .action(async (args: string[], flags: MergeFlags) => {
      const dirs = await mergeFolders(args, flags);
      const result = await mergeRuns(dirs, flags.outputDir, { maxRecords: flags.maxRecords });
      const mode = result.mode === 'histogram' ? ' (histogram mode: percentiles within 0.1%; see warnings in results.json)' : '';
      process.stdout.write(`merged ${counted(result.records, 'record')} from ${counted(result.runs, 'run')} into ${result.outputDir}${mode}\n`);
      const rates = result.cacheHitRates;
      if (rates !== null) process.stdout.write(`server cache: ${cacheHitRatesText(rates)}, over the merged runs' windows\n`);
      for (const warning of result.warnings) process.stderr.write(`chatload merge: warning: ${escapeControl(warning)}\n`);
    });
}

/**
 * The folders to merge. Without --expect, the arguments as given, a pattern replaced by its matches (one that matches
 * nothing is refused). With --expect N, the N folders once they are complete, waiting up to --wait for them.
 */
async function mergeFolders(args: string[], flags: MergeFlags): Promise<string[]> {
  if (flags.expect === undefined) {
    if (flags.wait !== undefined) throw new ConfigError('merge --wait: needs --expect N, the number of shard folders to wait for');
    const { folders, patterns } = shardFolders(args, flags.outputDir);
    const empty = patterns.filter((p) => shardFolders([p], flags.outputDir).folders.length === 0);
    if (empty.length > 0) throw new ConfigError(`merge ${empty[0]}: no folder matches it`);
    return folders;
  }
  const stop = new AbortController();
  const removeHandlers = onStopSignals(() => stop.abort());
  const waitMs = flags.wait ?? 0;
  try {
    return await waitForShards({
      args,
      expect: flags.expect,
      waitMs,
      exclude: flags.outputDir,
      signal: stop.signal,
      onWaiting: (missing) => process.stderr.write(`chatload merge: waiting up to ${formatWait(waitMs)} for ${flags.expect} complete shard folders; missing: ${escapeControl(missing)}\n`),
    });
  } finally {
    removeHandlers();
  }
}
