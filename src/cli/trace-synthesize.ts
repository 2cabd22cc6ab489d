import type { Command } from 'commander';
import * as z from 'zod';
import { csvTraceFormatOf } from '../conversation/csv-trace-file.js';
import { ConfigError } from '../errors/index.js';
import { addTableOptions, readTableOptions } from '../options/commander.js';
import { fieldsOf, optionsError, problemsOf } from '../options/run-options.js';
import { traceSynthesizeOptions } from '../options/table/trace.js';
import { writeStreamAtomic } from '../store/atomic-write.js';
import { describeFsError } from '../store/output-dir.js';
import type { TraceSynthesisSummary } from '../synth/trace-synthesis.js';
import { synthesizeCsvTrace } from '../synth/trace-synthesize-csv.js';
import { synthesizeHashTrace } from '../synth/trace-synthesize-hash.js';
import { examplesText } from './examples.js';
import { problemLines } from './run-options.js';

const synthesizeSchema = z.object(fieldsOf(traceSynthesizeOptions)).strict();

/** Flags of `chatload trace synthesize`, validated. */
export type TraceSynthesizeFlags = z.output<typeof synthesizeSchema>;

/**
 * Runs `chatload trace synthesize IN -o OUT`: writes a new trace in IN's format, scaled in rate and lengths, with its
 * prefix structure kept or set (docs/DATASETS.md, "Trace synthesis"). OUT is written atomically: its temporary file
 * is opened before IN is read, so an unwritable OUT fails at once, and OUT appears only whole.
 */
export async function runTraceSynthesize(file: string, flags: TraceSynthesizeFlags): Promise<TraceSynthesisSummary> {
  const options = { rateScale: flags.rateScale, islScale: flags.islScale, oslScale: flags.oslScale, prefixShare: flags.prefixShare, seed: flags.seed };
  const utf8 = { allowInvalidUtf8: flags.allowInvalidUtf8 };
  const csvFormat = await csvTraceFormatOf(file, { trace: { format: flags.inputFormat } });
  let summary: TraceSynthesisSummary | undefined;
  const given = flags.inputFormat;
  if (given === 'weka' || given === 'otel' || given === 'mooncake-toolagent') {
    throw optionsError([`--input-format ${given}: trace synthesize rewrites Mooncake, Bailian, Azure and BurstGPT traces; an agentic trace's sessions and sub-agents it cannot rescale yet`]);
  }
  const produce = async (write: (text: string) => void): Promise<void> => {
    const format = given === 'azure' || given === 'burstgpt' ? undefined : given;
    summary =
      csvFormat !== undefined
        ? await synthesizeCsvTrace(file, csvFormat, options, write, utf8)
        : await synthesizeHashTrace(file, format, { ...options, ...utf8, blockSize: flags.traceBlockSize }, write);
  };
  const out = flags.output;
  if (out === undefined) throw optionsError(['--output: expected the file to write the new trace to']);
  try {
    await writeStreamAtomic(out, produce);
  } catch (error) {
    // The file system's refusal (the folder unwritable, no space) names OUT; a bad input says its own line.
    if (error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('E')) throw new ConfigError(`--output ${out}: cannot write it (${describeFsError(error)})`, { cause: error });
    throw error;
  }
  return summary!;
}

/** What was changed, in words: `rate x2, ISL x1, OSL x0.5, prefix structure kept, seed 0`. */
function changes(flags: TraceSynthesizeFlags, summary: TraceSynthesisSummary): string {
  const csv = summary.format === 'azure' || summary.format === 'burstgpt';
  const share = csv ? 'no prefix structure' : flags.prefixShare === undefined ? 'prefix structure kept' : `prefix share ${flags.prefixShare}`;
  return `rate x${flags.rateScale}, ISL x${flags.islScale}, OSL x${flags.oslScale}, ${share}, seed ${flags.seed}`;
}

/** Adds `chatload trace synthesize` to the `trace` command. */
export function registerTraceSynthesize(trace: Command): void {
  const synthesize = trace
    .command('synthesize')
    .argument('<file>', 'a Mooncake or Bailian trace (JSONL), or an Azure or BurstGPT trace (CSV)')
    .description("writes a new trace in the same format: its rate and lengths scaled, its shared-prefix structure kept or set (--prefix-share); `trace stats` of the result shows the changes")
    .addHelpText('after', examplesText('trace synthesize'));
  addTableOptions(synthesize, traceSynthesizeOptions);
  synthesize.exitOverride();
  synthesize.action(async (file: string) => {
    const given = readTableOptions(synthesize, traceSynthesizeOptions);
    const parsed = synthesizeSchema.safeParse(given.values);
    const all = [...given.problems, ...(parsed.success ? [] : problemsOf(parsed.error))];
    if (all.length > 0 || !parsed.success) throw optionsError(problemLines(all, traceSynthesizeOptions, given));
    const summary = await runTraceSynthesize(file, parsed.data);
    process.stderr.write(`chatload: wrote ${parsed.data.output}: ${summary.format} trace, ${summary.requests.toLocaleString('en-US')} requests (${changes(parsed.data, summary)})\n`);
  });
}
