import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../errors/index.js';
import { loadRunData, REPORT_MAX_RECORDS, type RunData } from '../store/run-data.js';
import { writeTextAtomic } from '../store/atomic-write.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';

/** Records (count) kept per run at least, whatever the number of runs compared. */
const MIN_RECORDS_PER_RUN = 1_000;

/**
 * Adds `chatload compare RUN_A RUN_B ... [--html FILE]`: a side-by-side table of the key metrics of two or more runs
 * (the first is the baseline), with deltas and percentages; `--html` also writes overlaid per-turn curves and CDFs.
 * The runs share one report's memory budget (REPORT_MAX_RECORDS records): a run with more than its share is charted
 * from a uniform sample (see loadRunData).
 */
export function registerCompareCommand(program: Command): void {
  program
    .command('compare')
    .description(COMMAND_DESCRIPTIONS.compare)
    .argument('<results-dirs...>', 'results directories (results.json and/or requests.jsonl), baseline first')
    .option('--html <file>', 'also write an HTML page with overlaid per-turn curves and distributions')
    .action(async (dirs: string[], flags: { html?: string }) => {
      // Loaded here, not at start: its charts pull in @observablehq/plot and linkedom, slow to import.
      const { formatComparison, renderCompareHtml } = await import('../report/compare.js');
      if (dirs.length < 2) throw new ConfigError(`compare needs at least two results directories, got ${dirs.length}`);
      const maxRecords = Math.max(MIN_RECORDS_PER_RUN, Math.floor(REPORT_MAX_RECORDS / dirs.length));
      // One at a time, so that memory holds the samples kept, never several files' passes at once.
      const runs: RunData[] = [];
      for (const dir of dirs) runs.push(await loadRunData(dir, { maxRecords }));
      const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
      process.stdout.write(formatComparison(runs, { color }));
      if (flags.html !== undefined) {
        const path = resolve(flags.html);
        writeTextAtomic(path, renderCompareHtml(runs));
        process.stderr.write(`chatload: wrote ${path}\n`);
      }
    });
}
