import { readFileSync } from 'node:fs';
import { DatasetError } from '../errors/dataset-error.js';
import { shownValue } from '../errors/shown-value.js';
import type { ClientHealth } from '../metrics/client-health.js';
import type { ConversationCounts } from '../metrics/conversation-counts.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import type { RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import type { GpuResults } from '../metrics/gpu-types.js';
import type { ReplicaRow, RoutingLoss } from '../metrics/replica-types.js';
import type { Summary } from '../metrics/summary.js';
import type { EngineInfo } from '../server-engine/detect.js';
import type { ServerMetricsReport } from '../server-metrics/scraper.js';
import { gpuSectionOf } from './gpu-section.js';
import { redactSecrets } from './redact.js';
import type { ResultsEnvironment } from './results-document.js';
import { checkShape } from './schema-check.js';
import { schemaOf, type JsonSchema } from './schema-files.js';
import { RESULTS_SCHEMA_VERSION } from './schema-version.js';

/** Facts about the run shown in a report's header and carried into a merge, each when the file has it. */
export interface StoredFacts {
  model?: string;
  url?: string;
  dataset?: string;
  stop_reason?: string;
  tokenizer?: string;
  created_at?: string;
  chatload_version?: string;
  crashed_tasks?: number;
  environment?: ResultsEnvironment;
  /** The serving engine detected (a run's; a merge's since schema 1.3.0). */
  engine?: EngineInfo;
}

/**
 * A results.json as `report`, `compare` and `merge` read it back: the fields they use, each checked against the
 * published schema's type. Fields that older files lack are null (or empty).
 */
export interface StoredResults {
  /** The file read. */
  path: string;
  /** The file's schema_version; null for a file written before results.json had one (read as the first 1.x). */
  schemaVersion: string | null;
  summary: Summary;
  /** null when absent. */
  perTurn: TurnSummary[] | null;
  /** Actual against expected cached tokens; null when absent (files before issue #13, or of its first shape). */
  prefixCache: RunPrefixCache | null;
  clientHealth: ClientHealth | null;
  /** The run's options (results.json `config`), redacted again; empty when absent. */
  config: Record<string, unknown>;
  /** The keys of `config` that were defaults (`defaulted_options`); null when not recorded. */
  defaulted: string[] | null;
  facts: StoredFacts;
  /** How the dataset's conversations ended; null when unknown. */
  conversations: Partial<ConversationCounts> | null;
  /** The warnings the run recorded. */
  warnings: string[];
  /** --shard as "I/N"; null when not sharded or not recorded. */
  shard: string | null;
  /** GPU power, utilisation and energy from a DCGM exporter page; null when the run read none. */
  gpu: GpuResults | null;
  /** `token_counts_exact`: whether the run's token counts were exact (false when absent). */
  tokenCountsExact: boolean;
  /** `replicas`: one row per replica behind a router (issue #31); null when absent. */
  replicas: ReplicaRow[] | null;
  /** `prefix_cache.routing`: the loss to routing; null when absent. */
  routing: RoutingLoss | null;
  /** `server_metrics`: what --scrape-metrics read from the server (a merge combines them); null when absent. */
  serverMetrics: ServerMetricsReport | null;
}

const FACT_KEYS = ['model', 'url', 'dataset', 'stop_reason', 'tokenizer', 'created_at', 'chatload_version', 'crashed_tasks', 'environment', 'engine'] as const;
/** The fields read (besides the facts), each checked when present. */
const READ_KEYS = ['summary', 'per_turn', 'prefix_cache', 'replicas', 'client_health', 'config', 'defaulted_options', 'conversations', 'warnings', 'shard', 'token_counts_exact', 'gpu', 'server_metrics', ...FACT_KEYS] as const;

/**
 * Reads a results.json: a DatasetError naming the file when it is not JSON, not an object, has no summary, a
 * schema_version of another major than this chatload writes, or a field read whose type is not the schema's (naming the
 * field). A file without schema_version (chatload before it had one) is read as the first 1.x.
 */
export function readResultsFile(path: string): StoredResults {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new DatasetError({ file: path }, `not valid JSON (expected a chatload results.json): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new DatasetError({ file: path }, `expected a JSON object (a chatload results.json), got ${shownValue(parsed)}`);
  const doc = parsed as Record<string, unknown>;
  const schemaVersion = checkVersion(path, doc.schema_version);
  // Every results.json chatload writes has its summary object; without one the file is not a run's (issue #35).
  if (doc.summary === undefined) throw new DatasetError({ file: path }, 'summary: expected an object (a chatload results.json has one), got nothing');
  const root = schemaOf('results');
  for (const key of READ_KEYS) {
    if (doc[key] === undefined || (key === 'prefix_cache' && schemaVersion === null)) continue;
    const miss = checkShape(doc[key], fieldSchema(root, key), root, key);
    if (miss !== undefined) throw new DatasetError({ file: path }, `${miss.field}: ${miss.problem}`);
  }
  return storedResults(path, schemaVersion, doc);
}

/**
 * A results.json as this process has just written it (`text`, the file's content), read as readResultsFile reads the
 * file, less the file read and the check of each field against the published schema: that schema is generated from
 * the very types the document was built with (`npm run schema`), so at the end of a run the check could only re-read
 * and walk the ~100 KB schema file again for nothing (issue #33, part 5: fixed cost at the end of every run).
 */
export function writtenResults(path: string, text: string): StoredResults {
  const doc = JSON.parse(text) as Record<string, unknown>;
  return storedResults(path, checkVersion(path, doc.schema_version), doc);
}

/** The file's schema_version, checked: null when absent, else a version of the major this chatload writes. */
function checkVersion(path: string, value: unknown): string | null {
  if (value === undefined) return null;
  const major = RESULTS_SCHEMA_VERSION.split('.')[0]!;
  const expected = `schema_version ${major}.x.y (this chatload writes ${RESULTS_SCHEMA_VERSION})`;
  const match = typeof value === 'string' ? /^(\d+)\.\d+\.\d+(?:[-+].*)?$/.exec(value) : null;
  if (match === null) throw new DatasetError({ file: path }, `schema_version: expected a version like "${RESULTS_SCHEMA_VERSION}", got ${shownValue(value)}`);
  if (match[1] !== major) {
    const hint = Number(match[1]) > Number(major) ? 'written by a newer chatload: upgrade chatload to read it' : 'written by an older chatload';
    throw new DatasetError({ file: path }, `schema_version ${value} is not one this chatload reads, expected ${expected}: ${hint}`);
  }
  return value as string;
}

/** The schema of a top-level field of results.json (a run's or a merge's document). */
function fieldSchema(root: JsonSchema, key: string): JsonSchema {
  const pending: JsonSchema[] = [root];
  for (let s = pending.shift(); s !== undefined; s = pending.shift()) {
    if (s.properties?.[key] !== undefined) return s.properties[key];
    if (s.$ref !== undefined) pending.push(root.definitions?.[decodeURIComponent(s.$ref.replace(/^#\/definitions\//, ''))] ?? {});
    pending.push(...(s.anyOf ?? []), ...(s.allOf ?? []));
  }
  return {};
}

function storedResults(path: string, schemaVersion: string | null, doc: Record<string, unknown>): StoredResults {
  const facts: Record<string, unknown> = {};
  for (const key of FACT_KEYS) if (doc[key] !== undefined && doc[key] !== null) facts[key] = doc[key];
  const prefix = doc.prefix_cache as Record<string, unknown> | null | undefined;
  // Unversioned files hold prefix_cache in its first shape too (before the global model, issue #30): left out then.
  const prefixCache = isObject(prefix) && isObject(prefix.totals) && Array.isArray(prefix.per_turn) && isObject(prefix.model) ? (prefix as unknown as RunPrefixCache) : null;
  const conversations = isObject(doc.conversations) ? (doc.conversations as Partial<ConversationCounts>) : null;
  return {
    path,
    schemaVersion,
    summary: doc.summary as Summary,
    perTurn: (doc.per_turn as TurnSummary[] | undefined) ?? null,
    prefixCache,
    clientHealth: (doc.client_health as ClientHealth | null | undefined) ?? null,
    // Defensive: results.json is already redacted, but a hand-edited or older file may not be.
    config: redactSecrets((doc.config as Record<string, unknown> | undefined) ?? {}),
    defaulted: (doc.defaulted_options as string[] | undefined) ?? null,
    facts: redactSecrets(facts as StoredFacts),
    conversations,
    warnings: (doc.warnings as string[] | undefined) ?? [],
    shard: (doc.shard as string | null | undefined) ?? null,
    tokenCountsExact: doc.token_counts_exact === true,
    gpu: gpuSectionOf(doc),
    replicas: (doc.replicas as ReplicaRow[] | null | undefined) ?? null,
    routing: prefixCache?.routing ?? null,
    // Redacted again, as the config is: a merge writes it out anew.
    serverMetrics: isObject(doc.server_metrics) ? redactSecrets(doc.server_metrics as unknown as ServerMetricsReport) : null,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
