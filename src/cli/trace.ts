import type { Command } from 'commander';
import * as z from 'zod';
import { loadDataset } from '../conversation/index.js';
import { DatasetError } from '../errors/index.js';
import { addTableOptions, readTableOptions } from '../options/commander.js';
import { fieldsOf, optionsError, problemsOf } from '../options/run-options.js';
import { traceStatsOptions } from '../options/table/trace.js';
import { formatTraceStats, traceStats, traceStatsJson } from '../synth/trace-stats.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { problemLines } from './run-options.js';

const statsSchema = z.object(fieldsOf(traceStatsOptions)).strict();

/** Flags of `chatload trace stats`, validated. */
export type TraceStatsFlags = z.output<typeof statsSchema>;

/**
 * Runs `chatload trace stats FILE`: reads a Mooncake or Bailian trace and prints its input and output lengths, its
 * request rate over time and its theoretical prefix-cache hit ratio (unbounded, and with --kv-cache-tokens).
 */
export async function runTraceStats(file: string, flags: TraceStatsFlags, out: (text: string) => void = (t) => process.stdout.write(t)): Promise<void> {
  const dataset = await loadDataset(file, {
    allowInvalidUtf8: flags.allowInvalidUtf8,
    traceOnly: true,
    trace: { format: flags.inputFormat, blockSize: flags.traceBlockSize, window: flags.traceWindow },
    warn: (message) => process.stderr.write(`chatload: warning: ${message}\n`),
  });
  if (!dataset.conversations.some((c) => c.trace !== undefined)) {
    throw new DatasetError({ file }, `not a Mooncake or Bailian trace (read as ${dataset.format}); name the format with --input-format`);
  }
  const stats = traceStats(dataset.conversations, flags.kvCacheTokens);
  out(flags.json ? `${JSON.stringify(traceStatsJson(stats), null, 2)}\n` : `${formatTraceStats(stats, file)}\n`);
}

/** Adds `chatload trace` and its subcommand `stats`. */
export function registerTraceCommand(program: Command): void {
  const trace = program.command('trace').description(COMMAND_DESCRIPTIONS.trace).addHelpText('after', examplesText('trace'));
  const stats = trace
    .command('stats')
    .argument('<file>', 'a Mooncake or Bailian trace (JSONL)')
    .description('ISL/OSL distributions, request rate over time and the theoretical prefix-cache hit ratio of a trace (from its hash_ids alone)')
    .addHelpText('after', examplesText('trace stats'));
  addTableOptions(stats, traceStatsOptions);
  stats.exitOverride();
  stats.action(async (file: string) => {
    const given = readTableOptions(stats, traceStatsOptions);
  const { values, problems } = given;
    const parsed = statsSchema.safeParse(values);
    const all = [...problems, ...(parsed.success ? [] : problemsOf(parsed.error))];
    if (all.length > 0 || !parsed.success) throw optionsError(problemLines(all, traceStatsOptions, given));
    await runTraceStats(file, parsed.data);
  });
}
