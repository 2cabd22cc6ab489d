// Store: a run's files on disk. The requests.jsonl sink and reader, results.json, atomic writes, the output folder,
// loading a finished run back, and redaction of what is written. Renderers live in report/.
export { RequestsJsonlSink, readRequestsJsonl, streamRequestsJsonl, countJsonlLines } from './requests-jsonl.js';
export {
  buildResultsDocument,
  vllmFlatKeys,
  FLAT_METRICS,
  FLAT_PERCENTILES,
  type ResultsDocument,
  type RunResultsDocument,
  type MergedResultsDocument,
  type ResultsEnvironment,
  type ResultsInput,
  type VllmFlatKeys,
} from './results-json.js';
export { redactSecrets, isSecretKey, REDACTED } from './redact.js';
export { tempPathFor, writeJsonAtomic, writePiecesAtomic, writeStreamAtomic, writeTextAtomic } from './atomic-write.js';
export { loadRunData, normalizeRecord, RESULTS_FILE, REQUESTS_FILE, REPORT_MAX_RECORDS, type LoadRunDataOptions, type RunData } from './run-data.js';
export { readResultsFile, type StoredResults, type StoredFacts } from './results-reader.js';
export { RESULTS_SCHEMA_VERSION } from './schema-version.js';
export { SCHEMA_FILES, schemaText, type SchemaName } from './schema-files.js';
export { analyzeRecordsFile } from './records-file-analysis.js';
export { defaultOutputDir, prepareOutputDir } from './output-dir.js';
