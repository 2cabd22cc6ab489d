import { mkdirSync, renameSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { tempPathFor } from '../store/atomic-write.js';
import ExcelJS from 'exceljs';
import { ERROR_KINDS } from '../metrics/error-kinds.js';
import type { StatField, Stats } from '../metrics/stats.js';
import { percentileSupported } from '../metrics/percentile-support.js';
import { commandLineOf, optionRow } from '../options/command-line.js';
import { columnValue, recordColumns } from './record-columns.js';
import { SUMMARY_METRIC_ROWS } from '../metrics/summary.js';
import type { RunData } from '../store/run-data.js';

/** Sheet names, in workbook order: the reference's two sheets, then chatload's per-turn table. */
export const EXCEL_SHEETS = ['Summary', 'Raw data', 'Per turn'] as const;

/** Metric rows of the Summary sheet's statistics table. */
const SUMMARY_METRICS = SUMMARY_METRIC_ROWS;

/** The statistics columns with the reference's (pandas describe) headers. */
const STATS_HEADERS: ReadonlyArray<[StatField, string]> = [
  ['count', 'count'],
  ['mean', 'mean'],
  ['std', 'std'],
  ['min', 'min'],
  ['p25', '25%'],
  ['p50', '50%'],
  ['p75', '75%'],
  ['p90', '90%'],
  ['p99', '99%'],
  ['p99_9', '99.9%'],
  ['max', 'max'],
];

/** Header row of the "Per turn" sheet. */
export const PER_TURN_HEADERS = [
  'turn',
  'completed',
  'failed',
  'ttft_ms_mean',
  'ttft_ms_p50',
  'ttft_ms_p90',
  'ttft_ms_p99',
  'tpot_ms_p50',
  'tpot_ms_p90',
  'tpot_ms_p99',
  'e2el_ms_p50',
  'e2el_ms_p90',
  'e2el_ms_p99',
  'input_num_tokens_mean',
  'cached_tokens_mean',
  'expected_cached_tokens_mean',
  'cache_hit_ratio',
] as const;

/** A value as an Excel cell: objects as JSON text (Excel caps a cell at 32767 characters). */
function cell(value: unknown): ExcelJS.CellValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' || typeof value === 'boolean') return typeof value === 'string' ? value.slice(0, 32767) : value;
  return JSON.stringify(value).slice(0, 32767);
}

/**
 * Writes the run as an .xlsx workbook: "Summary" (the statistics table with the reference's pandas-describe headers,
 * then runtime, throughputs and totals, then the command line and parameters by flag name; rounded; headers frozen), "Raw data" (one row per request record, header in row 1,
 * warmup and failed records included; when `data.sampled`, one row per record of the sample, and the Summary sheet's
 * `raw_data` row says "uniform sample of M of N records") and "Per turn". Streams rows to disk, so memory stays bounded on large runs;
 * written to a temporary file and renamed into place.
 */
export async function writeExcelReport(path: string, data: RunData): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempPathFor(path, '.xlsx');
  try {
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: tmp, useStyles: true, useSharedStrings: false });
    workbook.creator = 'chatload';
    // Header rows (and the metric column of the statistics) stay in view while scrolling; the tables get filters.
    writeSummarySheet(workbook.addWorksheet(EXCEL_SHEETS[0], { views: [{ state: 'frozen', xSplit: 1, ySplit: 2 }] }), data);
    const columns = recordColumns(data.records);
    const raw = workbook.addWorksheet(EXCEL_SHEETS[1], { views: [{ state: 'frozen', xSplit: 0, ySplit: 1 }] });
    raw.autoFilter = filterRange(columns.length);
    writeRawDataSheet(raw, data, columns);
    const perTurn = workbook.addWorksheet(EXCEL_SHEETS[2], { views: [{ state: 'frozen', xSplit: 1, ySplit: 1 }] });
    perTurn.autoFilter = filterRange(PER_TURN_HEADERS.length);
    writePerTurnSheet(perTurn, data);
    await workbook.commit();
    renameSync(tmp, path);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // never created
    }
    throw error;
  }
}

function boldRow(row: ExcelJS.Row): void {
  row.font = { bold: true };
}

/**
 * A derived figure rounded for reading (issue 18: 29.652639999999998): 3 decimals, or 4 below 1 (ratios). The raw
 * records keep the values as recorded.
 */
export function rounded(value: unknown): ExcelJS.CellValue {
  if (typeof value !== 'number' || !Number.isFinite(value) || Number.isInteger(value)) return cell(value);
  const factor = Math.abs(value) < 1 ? 1e4 : 1e3;
  return Math.round(value * factor) / factor;
}

/** A stats field for the sheet: p99 and p99.9 only where the count supports them (100 and 1,000 values), as the terminal. */
function statCell(stats: Stats, field: StatField): ExcelJS.CellValue {
  const p = field === 'p99' ? 99 : field === 'p99_9' ? 99.9 : null;
  return p !== null && !percentileSupported(p, stats.count) ? null : rounded(stats[field]);
}

function writeSummarySheet(sheet: ExcelJS.Worksheet, data: RunData): void {
  sheet.columns = [{ width: 30 }, ...STATS_HEADERS.map(() => ({ width: 12 }))];
  // The statistics first (the answer), then the totals, then the parameters (issue 18: they started at row ~55).
  const statsTitle = sheet.addRow(['Statistics']);
  boldRow(statsTitle);
  statsTitle.commit();
  const head = sheet.addRow(['metric', ...STATS_HEADERS.map(([, h]) => h)]);
  boldRow(head);
  head.commit();
  const s = data.summary;
  for (const metric of SUMMARY_METRICS) {
    const stats = s.metrics?.[metric] ?? null;
    sheet.addRow([metric, ...STATS_HEADERS.map(([field]) => (stats === null ? null : statCell(stats, field)))]).commit();
  }
  sheet.addRow([]).commit();
  const totals: Array<[string, unknown]> = [
    ['runtime_sec', s.runtime_sec],
    ['requests_per_sec', s.request_throughput],
    ['output_tokens_per_sec', s.output_throughput],
    ['total_tokens_per_sec', s.total_token_throughput],
    ['requests', s.requests],
    ['completed', s.completed],
    ['failed', s.failed],
    // Every kind that occurred, in the summary's order (src/metrics/error-kinds.ts), as the terminal and HTML show them.
    ...ERROR_KINDS.filter((kind) => (s.failed_by_kind?.[kind] ?? 0) > 0).map((kind): [string, unknown] => [`failed_${kind}`, s.failed_by_kind[kind]]),
    ['error_rate', s.error_rate],
    ['warmup_excluded', s.warmup_excluded],
    ['total_input_tokens', s.total_input_tokens],
    ['total_output_tokens', s.total_output_tokens],
    ['total_cached_tokens', s.total_cached_tokens],
    ['total_expected_cached_tokens', s.total_expected_cached_tokens],
    ['cache_hit_ratio', s.cache_hit_ratio],
    ['cache_efficiency', s.cache_efficiency],
  ];
  const totalsTitle = sheet.addRow(['Totals']);
  boldRow(totalsTitle);
  totalsTitle.commit();
  for (const [key, value] of totals) sheet.addRow([key, rounded(value)]).commit();
  sheet.addRow([]).commit();

  const title = sheet.addRow(['Parameters']);
  boldRow(title);
  title.commit();
  const params: Array<[string, unknown]> = [
    ['run', data.label],
    ['finished', data.finished],
    // A large run's Raw data sheet holds a sample (Excel's row limit is 1,048,576 anyway): say so where it is read.
    ...(data.sampled
      ? ([
          ['records', data.recordsTotal],
          ['raw_data', `uniform sample of ${data.records.length} of ${data.recordsTotal} records (requests.jsonl and the CSV hold every record)`],
        ] as Array<[string, unknown]>)
      : []),
    ...Object.entries(data.facts),
    ...Object.entries(data.conversations).map(([k, v]): [string, unknown] => [`conversations_${k}`, v]),
    ...(Object.keys(data.config).length > 0 ? ([['command', commandLineOf(data.config)]] as Array<[string, unknown]>) : []),
    ...Object.entries(data.config)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]): [string, unknown] => {
        const row = optionRow(k, v);
        return [row.option, data.defaulted?.includes(k) === true ? `${row.value} (default)` : row.value];
      }),
  ];
  for (const [key, value] of params) sheet.addRow([key, cell(value)]).commit();
  sheet.commit();
}

/** The autofilter over a header row of `columns` columns in row 1, e.g. A1:Q1. */
function filterRange(columns: number): string {
  let n = Math.max(1, columns);
  let name = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    name = String.fromCharCode(65 + r) + name;
    n = Math.floor((n - 1) / 26);
  }
  return `A1:${name}1`;
}

function writeRawDataSheet(sheet: ExcelJS.Worksheet, data: RunData, columns: string[]): void {
  sheet.columns = columns.map((c) => ({ width: Math.max(10, Math.min(24, c.length + 2)) }));
  const head = sheet.addRow(columns);
  boldRow(head);
  head.commit();
  for (const r of data.records) sheet.addRow(columns.map((c) => cell(columnValue(r, c)))).commit();
  sheet.commit();
}

function writePerTurnSheet(sheet: ExcelJS.Worksheet, data: RunData): void {
  const head = sheet.addRow([...PER_TURN_HEADERS]);
  boldRow(head);
  head.commit();
  for (const t of data.perTurn) {
    sheet
      .addRow([
        t.turn,
        t.completed,
        t.failed,
        rounded(t.ttft_ms?.mean),
        rounded(t.ttft_ms?.p50),
        rounded(t.ttft_ms?.p90),
        rounded(t.ttft_ms?.p99),
        rounded(t.tpot_ms?.p50),
        rounded(t.tpot_ms?.p90),
        rounded(t.tpot_ms?.p99),
        rounded(t.e2el_ms?.p50),
        rounded(t.e2el_ms?.p90),
        rounded(t.e2el_ms?.p99),
        rounded(t.input_num_tokens?.mean),
        rounded(t.cached_tokens?.mean),
        rounded(t.expected_cached_tokens?.mean),
        rounded(t.cache_hit_ratio),
      ])
      .commit();
  }
  sheet.commit();
}
