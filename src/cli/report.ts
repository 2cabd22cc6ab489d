import type { Command } from 'commander';
import { ConfigError } from '../errors/index.js';
import { loadRunData } from '../store/run-data.js';
import { REPORT_FILES, writeReportsFor } from '../report/write-reports.js';
import { join, resolve } from 'node:path';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';

/** The flags of `chatload report`, as commander parses them. */
interface ReportFlags {
  /** True, or a path given as `--excel FILE`. */
  excel?: boolean | string;
  csv?: boolean | string;
  html: boolean;
  output?: string;
}

/**
 * Adds `chatload report RESULTS_DIR [--excel [FILE]] [--csv [FILE]] [--no-html] [-o FILE]`: renders report.html (and
 * optionally the Excel workbook and the CSV) from a run's results.json and requests.jsonl. A run that did not finish
 * (no results.json) is reported from its records. Memory stays bounded: a run with more than REPORT_MAX_RECORDS
 * records is charted from a uniform sample, and the CSV is streamed from requests.jsonl.
 */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description(COMMAND_DESCRIPTIONS.report)
    .addHelpText('after', examplesText('report'))
    .argument('<results-dir>', 'a run\'s output folder holding results.json and/or requests.jsonl')
    .option('-e, --excel [file]', `also write the Excel workbook (default: <results-dir>/${REPORT_FILES.excel})`)
    .option('--csv [file]', `also write the per-request records as CSV (default: <results-dir>/${REPORT_FILES.csv})`)
    .option('--no-html', 'do not write the HTML report')
    .option('-o, --output <file>', `where to write the HTML report (default: <results-dir>/${REPORT_FILES.html})`)
    .action(async (dir: string, flags: ReportFlags) => {
      if (!flags.html && flags.output !== undefined) throw new ConfigError('--output names the HTML file, but --no-html turns it off');
      if (!flags.html && !flags.excel && !flags.csv) throw new ConfigError('nothing to write: --no-html without --excel or --csv');
      const data = await loadRunData(dir);
      const html = flags.html ? (flags.output === undefined ? join(data.dir, REPORT_FILES.html) : resolve(flags.output)) : undefined;
      const written = await writeReportsFor(data, { excel: flags.excel, csv: flags.csv }, { html });
      if (!data.finished) process.stderr.write(`chatload: note: ${data.warnings[0]}\n`);
      if (data.sampled) {
        process.stderr.write(
          `chatload: note: ${data.recordsTotal} records: charts, the errors list and the Excel raw data use a uniform sample of ` +
            `${data.records.length}${flags.csv ? '; the CSV holds every record' : ''}\n`,
        );
      }
      for (const path of Object.values(written)) process.stdout.write(`${path}\n`);
    });
}
