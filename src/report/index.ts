// Reports: renderers only, functions of records and summaries that write text or files. Never touch the network.
// Reading and writing a run's own files (requests.jsonl, results.json, atomic writes) is store/'s job.
export { toReferenceStats, writeReferenceStatsFile, REFERENCE_STATS_KEYS } from './stats-json.js';
export { formatSummary, type TerminalOptions, type TerminalSummaryInput } from './terminal.js';
export { LiveView, type ProgressMode } from './progress.js';
export { writeRunReports, writeReportsFor, REPORT_FILES, type ReportOutputs, type WrittenReports } from './write-reports.js';
export { renderHtmlReport } from './html.js';
export { writeExcelReport, EXCEL_SHEETS, PER_TURN_HEADERS } from './excel.js';
export { toRequestsCsv, requestsCsvLines, writeRequestsCsv, writeRequestsCsvFromJsonl, csvField } from './csv.js';
export { compareRuns, formatComparison, renderCompareHtml, runLabels, delta, type ComparisonRow, type Better } from './compare.js';
