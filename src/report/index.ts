// Reports: functions of records and summaries that write files or text. Never touch the network.
export { RequestsJsonlSink, readRequestsJsonl, streamRequestsJsonl, countJsonlLines } from '../store/requests-jsonl.js';
export {
  buildResultsDocument,
  vllmFlatKeys,
  FLAT_METRICS,
  FLAT_PERCENTILES,
  type ResultsDocument,
  type ResultsEnvironment,
  type ResultsInput,
  type VllmFlatKeys,
} from '../store/results-json.js';
export { redactSecrets, isSecretKey, REDACTED } from '../store/redact.js';
export { tempPathFor, writeJsonAtomic, writePiecesAtomic, writeStreamAtomic, writeTextAtomic } from '../store/atomic-write.js';
export { toReferenceStats, writeReferenceStatsFile, REFERENCE_STATS_KEYS } from './stats-json.js';
export { formatSummary, type TerminalOptions, type TerminalSummaryInput } from './terminal.js';
export { ProgressLine, type ProgressLineOptions } from './progress.js';
export { chatloadVersion } from '../util/version.js';
export { writeRunReports, writeReportsFor, REPORT_FILES, type ReportOutputs, type WrittenReports } from './write-reports.js';
export { loadRunData, normalizeRecord, RESULTS_FILE, REQUESTS_FILE, REPORT_MAX_RECORDS, type LoadRunDataOptions, type RunData } from '../store/run-data.js';
export { renderHtmlReport } from './html.js';
export { writeExcelReport, EXCEL_SHEETS, PER_TURN_HEADERS } from './excel.js';
export { toRequestsCsv, requestsCsvLines, writeRequestsCsv, writeRequestsCsvFromJsonl, csvField } from './csv.js';
export { compareRuns, formatComparison, renderCompareHtml, runLabels, delta, type ComparisonRow, type Better } from './compare.js';
