import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { RepeatInterval } from '../report/repeats.js';
import type { Command } from 'commander';
import { ConfigError } from '../errors/index.js';
import { loadRunData, REPORT_MAX_RECORDS, type RunData } from '../store/run-data.js';
import { writeTextAtomic } from '../store/atomic-write.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { terminalWidth } from '../report/terminal-width.js';

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
    .addHelpText('after', examplesText('compare'))
    .argument('<results-dirs...>', 'results directories (results.json and/or requests.jsonl), baseline first')
    .option('--html <file>', 'also write an HTML page with overlaid per-turn curves and distributions')
    .action(async (dirs: string[], flags: { html?: string }) => {
      // Loaded here, not at start: its charts (and d3-scale) are code only this command needs.
      const { formatComparison, renderCompareHtml } = await import('../report/compare.js');
      if (dirs.length < 2) throw new ConfigError(`compare needs at least two results directories, got ${dirs.length}`);
      const maxRecords = Math.max(MIN_RECORDS_PER_RUN, Math.floor(REPORT_MAX_RECORDS / dirs.length));
      // One at a time, so that memory holds the samples kept, never several files' passes at once.
      const runs: RunData[] = [];
      const repeats: Array<RepeatInterval[] | undefined> = [];
      for (const dir of dirs) {
        // A `run --repeat N` folder: its first repetition stands for it in the charts, and its repeats.json gives
        // the table each metric's mean across the repetitions and their 95% interval as the noise band.
        const repeatsFile = join(dir, 'repeats.json');
        if (existsSync(repeatsFile) && !existsSync(join(dir, 'results.json')) && !existsSync(join(dir, 'requests.jsonl'))) {
          const doc = JSON.parse(readFileSync(repeatsFile, 'utf8')) as { runs?: string[]; metrics?: RepeatInterval[] };
          const first = doc.runs?.[0];
          if (first === undefined || !Array.isArray(doc.metrics)) throw new ConfigError(`${repeatsFile}: expected runs and metrics (a run --repeat folder)`);
          const data = await loadRunData(existsSync(first) ? first : join(dir, basename(first)), { maxRecords });
          runs.push({ ...data, label: basename(resolve(dir)), dir: resolve(dir) });
          repeats.push(doc.metrics);
        } else {
          runs.push(await loadRunData(dir, { maxRecords }));
          repeats.push(undefined);
        }
      }
      const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
      process.stdout.write(formatComparison(runs, { color, repeats, width: terminalWidth(process.stdout) }));
      if (flags.html !== undefined) {
        const path = resolve(flags.html);
        writeTextAtomic(path, renderCompareHtml(runs, { repeats }));
        process.stderr.write(`chatload: wrote ${path}\n`);
      }
    });
}
