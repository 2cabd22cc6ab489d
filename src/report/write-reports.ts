import { join, resolve } from 'node:path';
import { writeTextAtomic } from '../store/atomic-write.js';
import { writeRequestsCsv, writeRequestsCsvFromJsonl } from './csv.js';
import type { StoredResults } from '../store/results-reader.js';
import { loadRunData, REQUESTS_FILE, type RunData } from '../store/run-data.js';

/** Default file names, written into the results directory. */
export const REPORT_FILES = { html: 'report.html', excel: 'report.xlsx', csv: 'requests.csv' } as const;

/**
 * Which reports to write. `true` writes the default file in the results directory (REPORT_FILES); a string is the path
 * to write instead (relative to the current directory); false or absent skips it.
 */
export interface ReportOutputs {
  html?: boolean;
  excel?: boolean | string;
  csv?: boolean | string;
}

/** The paths written, one per report asked for. */
export interface WrittenReports {
  html?: string;
  excel?: string;
  csv?: string;
}

/**
 * Reads results.json and requests.jsonl from `resultsDir` and writes the reports asked for. A run that did not finish
 * (no results.json) is summarized from its records and its report says so. A run with more than REPORT_MAX_RECORDS
 * records is charted from a uniform sample of them (see loadRunData); the CSV still holds every record. Throws
 * DatasetError when the directory holds neither file. Returns the paths written. `results`: results.json as the caller
 * has just written it (writtenResults), taken instead of reading the file back.
 */
export async function writeRunReports(resultsDir: string, outputs: ReportOutputs, results?: StoredResults): Promise<WrittenReports> {
  const data = await loadRunData(resultsDir, { results });
  return writeReportsFor(data, outputs, { html: outputs.html === true ? join(data.dir, REPORT_FILES.html) : undefined });
}

/**
 * As writeRunReports, for data already loaded; `paths.html` overrides where the HTML goes (e.g. `report -o FILE`).
 * When `data.sampled`, the CSV is streamed from the run's requests.jsonl (every record, bounded memory), not taken
 * from the sample.
 */
export async function writeReportsFor(data: RunData, outputs: ReportOutputs, paths: { html?: string } = {}): Promise<WrittenReports> {
  const written: WrittenReports = {};
  const target = (option: boolean | string | undefined, fallback: string): string | undefined =>
    option === undefined || option === false ? undefined : option === true ? join(data.dir, fallback) : resolve(option);

  // The renderers are loaded on first use: exceljs is slow to import, and the HTML renderer (with its chart writer
  // and d3-scale) is code only a report needs (docs/PERFORMANCE.md), which every command would otherwise load at start.
  if (paths.html !== undefined) {
    const { renderHtmlReport } = await import('./html.js');
    writeTextAtomic(paths.html, renderHtmlReport(data));
    written.html = paths.html;
  }
  const csv = target(outputs.csv, REPORT_FILES.csv);
  if (csv !== undefined) {
    if (data.sampled) await writeRequestsCsvFromJsonl(csv, join(data.dir, REQUESTS_FILE));
    else writeRequestsCsv(csv, data.records);
    written.csv = csv;
  }
  const excel = target(outputs.excel, REPORT_FILES.excel);
  if (excel !== undefined) {
    const { writeExcelReport } = await import('./excel.js');
    await writeExcelReport(excel, data);
    written.excel = excel;
  }
  return written;
}

