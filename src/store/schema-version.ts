/**
 * The version of results.json's schema (schema/results.schema.json) and of a requests.jsonl record's
 * (schema/record.schema.json), written as results.json's `schema_version`. Semver, as docs/REPORTS.md promises: major
 * when a reader of the old files may break, minor when fields are added, patch when the schema is corrected to what
 * chatload already wrote. `npm run schema -- --bump minor` (tools/schema.ts) rewrites this line.
 */
export const RESULTS_SCHEMA_VERSION = '1.5.0';
