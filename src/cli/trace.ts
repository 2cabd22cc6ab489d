import type { Command } from 'commander';
import * as z from 'zod';
import { loadDataset } from '../conversation/index.js';
import { csvTraceFormatOf, readCsvTrace } from '../conversation/csv-trace-file.js';
import { DatasetError } from '../errors/index.js';
import { addTableOptions, readTableOptions } from '../options/commander.js';
import { fieldsOf, optionsError, problemsOf } from '../options/run-options.js';
import { traceStatsOptions } from '../options/table/trace.js';
import { csvTraceStats, formatTraceStats, traceStats, traceStatsJson, type TraceStats } from '../synth/trace-stats.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { problemLines } from './run-options.js';
import { registerTraceSynthesize } from './trace-synthesize.js';

const statsSchema = z.object(fieldsOf(traceStatsOptions)).strict();

/** Flags of `chatload trace stats`, validated. */
export type TraceStatsFlags = z.output<typeof statsSchema>;

/**
 * Runs `chatload trace stats FILE`: reads a trace (Mooncake, Bailian, Azure, BurstGPT, or an agentic one) and prints its input and output
 * lengths, its request rate over time and its theoretical prefix-cache hit ratio (unbounded, and with
 * --kv-cache-tokens); for a CSV trace, that it has no prefix structure, and the rows its reading left out.
 */
export async function runTraceStats(file: string, flags: TraceStatsFlags, out: (text: string) => void = (t) => process.stdout.write(t)): Promise<void> {
  const stats = await statsOfTraceFile(file, flags);
  out(flags.json ? `${JSON.stringify(traceStatsJson(stats), null, 2)}\n` : `${formatTraceStats(stats, file)}\n`);
}

/** The statistics of a trace file, read with the trace options of `flags`. */
export async function statsOfTraceFile(file: string, flags: TraceStatsFlags): Promise<TraceStats> {
  const options = {
    allowInvalidUtf8: flags.allowInvalidUtf8,
    traceOnly: true,
    trace: { format: flags.inputFormat, blockSize: flags.traceBlockSize, window: flags.traceWindow, filter: flags.traceFilter },
    warn: (message: string) => process.stderr.write(`chatload: warning: ${message}\n`),
  };
  const csvFormat = await csvTraceFormatOf(file, options);
  // A CSV trace's rows stay columns (millions of rows in bounded memory): no Conversation is made for its statistics.
  if (csvFormat !== undefined) return csvTraceStats((await readCsvTrace(file, csvFormat, options)).columns());
  if (flags.traceFilter !== undefined) throw new DatasetError({ file }, '--trace-filter: applies to Azure and BurstGPT traces (CSV), and this file is none');
  const dataset = await loadDataset(file, options);
  if (!dataset.conversations.some((c) => c.trace !== undefined)) {
    throw new DatasetError({ file }, `not a production trace (read as ${dataset.format}); name the format with --input-format`);
  }
  return traceStats(dataset.conversations, flags.kvCacheTokens);
}

/** Adds `chatload trace` and its subcommands `stats` and `synthesize`. */
export function registerTraceCommand(program: Command): void {
  const trace = program.command('trace').description(COMMAND_DESCRIPTIONS.trace).addHelpText('after', examplesText('trace'));
  const stats = trace
    .command('stats')
    .argument('<file>', 'a Mooncake or Bailian trace (JSONL), an Azure or BurstGPT trace (CSV), or an agentic trace (Weka, OTel, Mooncake tool-agent)')
    .description('ISL/OSL distributions, request rate over time and the theoretical prefix-cache hit ratio of a trace (from its hash_ids alone; none for Azure and BurstGPT, which carry no prefix structure)')
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
  registerTraceSynthesize(trace);
}
