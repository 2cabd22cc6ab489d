import { createHash } from 'node:crypto';
import type { ConversationCounts } from '../metrics/conversation-counts.js';
import type { ConversationSummary } from '../metrics/per-conversation.js';
import { describe, type Stats } from '../metrics/stats.js';
import type { Summary } from '../metrics/summary.js';
import type { LoadPlan } from '../options/run-plan.js';
import { UUID_NAMESPACE_URL, uuid5 } from '../util/uuid5.js';

/*
 * llm-d-benchmark's benchmark report, version 0.2 (issue #32, part 4): what a harness of llm-d-benchmark leaves beside
 * its native results, so chatload can run as one. The format is llm-d-benchmark's
 * llmdbenchmark/analysis/benchmark_report/schema_v0_2.py (pydantic models, every model `extra="forbid"` except
 * `observability` and a `generic` component's `standardized`) and its published JSON Schema
 * br_v0_2_json_schema.json; how each of chatload's figures maps (exactly, approximately, or not at all) is in
 * docs/REPORTS.md.
 */

/** The report's schema version. */
export const LLMD_REPORT_VERSION = '0.2';

/** What the report is made of: the run's figures and what it ran against. Plain data, already redacted. */
export interface LlmdReportInput {
  /** A unique id for this report (`run.uid`): a random UUID. */
  uid: string;
  summary: Summary;
  perConversation: readonly ConversationSummary[];
  conversations: ConversationCounts;
  /** The options as results.json shows them (secrets redacted). */
  config: object;
  load: LoadPlan;
  /** The dataset as results.json names it, and whether it was a trace (its text synthesized from hash ids). */
  dataset: { source: string; traced: boolean };
  /** The server as detected, its URL with credentials redacted, and the model served. */
  server: { engine: string; version: string | null; url: string; model: string };
  chatloadVersion: string;
  /** Wall-clock start and end of the load (epoch ms). */
  time: { startMs: number; endMs: number };
  /** --shard's count (1 without shards): the workload generators the whole run had. */
  parts: number;
  /** BR's `stage` ("workload stage number, if multi-stage"): a sweep's point index, else 0. */
  stage: number;
  /**
   * What llm-d-benchmark's harness pod says of the experiment (LLMDBENCH_RUN_EXPERIMENT_ID,
   * LLMDBENCH_DESCRIPTION_TEXT, LLMDBENCH_DESCRIPTION_KEYWORDS), when set.
   */
  experiment: { id?: string; description?: string; keywords?: readonly string[] };
}

/** BR v0.2 `Statistics`: units, mean (required), and what else is known. */
type BrStatistics = Record<string, string | number>;

/** Stats' further percentiles (--metric-percentiles) that BR v0.2 has a field for. */
const EXTRA_PERCENTILES: Readonly<Record<string, string>> = { '0.1': 'p0p1', '1': 'p1', '5': 'p5', '10': 'p10', '95': 'p95' };

/** A chatload Stats as BR v0.2 Statistics in `units`, each value times `scale` (1/1000 for ms to s). */
function statistics(stats: Stats | null, units: string, scale = 1): BrStatistics | undefined {
  if (stats === null || stats.count === 0) return undefined;
  const v = (x: number): number => x * scale;
  const out: BrStatistics = { units, mean: v(stats.mean), stddev: v(stats.std), min: v(stats.min), p25: v(stats.p25), p50: v(stats.p50), p75: v(stats.p75), p90: v(stats.p90), p99: v(stats.p99), p99p9: v(stats.p99_9), max: v(stats.max) };
  for (const [key, value] of Object.entries(stats.percentiles ?? {})) {
    const field = EXTRA_PERCENTILES[key];
    if (field !== undefined) out[field] = v(value);
  }
  return out;
}

/** A 32-hex-digit id of a configuration (BR's `cfg_id`, "a hash of this component's configuration"). */
function configId(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);
}

/** ISO-8601 duration of `ms`, as llm-d's converters write it (`PT49.97S`). */
function isoDuration(ms: number): string {
  return `PT${Number((ms / 1000).toFixed(3))}S`;
}

/** `run`: the report's id, the experiment's (uuid5 of its id, as llm-d's converters make it), the time. */
function runSection(input: LlmdReportInput): Record<string, unknown> {
  const { experiment, time } = input;
  const description = experiment.description ?? experiment.id;
  return {
    uid: input.uid,
    eid: experiment.id === undefined ? undefined : uuid5(UUID_NAMESPACE_URL, experiment.id),
    time: { start: new Date(time.startMs).toISOString(), end: new Date(time.endMs).toISOString(), duration: isoDuration(time.endMs - time.startMs) },
    description,
    keywords: experiment.keywords !== undefined && experiment.keywords.length > 0 ? [...experiment.keywords] : undefined,
  };
}

/** A measured length as BR's SequenceLength: `other` (measured, not configured), its mean, min and max. */
function measuredLength(stats: Stats | null): Record<string, unknown> | undefined {
  if (stats === null || stats.count === 0) return undefined;
  return { distribution: 'other', value: stats.mean, min: Math.round(stats.min), max: stats.max >= 1 ? Math.round(stats.max) : undefined };
}

/** The load's rate and concurrency where BR has them: -p, --max-concurrency; -p × --request-rate (a per-client rate). */
function rateAndConcurrency(load: LoadPlan, traced: boolean): { rate_qps?: number; concurrency?: number } {
  const model = load.model;
  // A trace is replayed at its timestamps, capped by --max-concurrency alone.
  if (traced) return { concurrency: load.trace.maxConcurrency };
  if (model.type === 'fixed-clients') {
    return { concurrency: model.numClients, rate_qps: model.requestRatePerSec > 0 ? model.requestRatePerSec * model.numClients : undefined };
  }
  // Sessions/s are not queries/s, and an uncapped open loop's .inf has no JSON form: both left out.
  return { concurrency: model.maxConcurrency };
}

/** `scenario`: the server as one generic component, and chatload's load. */
function scenarioSection(input: LlmdReportInput): Record<string, unknown> {
  const { server, summary, perConversation } = input;
  const turns = describe(perConversation.map((c) => c.turns_completed + c.turns_failed));
  const serverStandardized = { kind: 'generic', tool: server.engine, tool_version: server.version ?? 'unknown', model: { name: server.model }, url: server.url };
  return {
    stack: [
      {
        metadata: { schema_version: '0.0.1', label: 'server-0', cfg_id: configId(serverStandardized), description: 'the server chatload measured, as it detected it' },
        standardized: serverStandardized,
        native: {},
      },
    ],
    load: {
      metadata: { schema_version: '0.0.1', cfg_id: configId(input.config), description: `chatload: ${input.dataset.source}` },
      standardized: {
        tool: 'chatload',
        tool_version: input.chatloadVersion,
        parallelism: input.parts,
        // A trace's prompts are synthesized from its hash ids (random words); every other dataset's text is sampled.
        source: input.dataset.traced ? 'random' : 'sampled',
        stage: input.stage,
        input_seq_len: measuredLength(summary.metrics.input_num_tokens) ?? { distribution: 'other', value: 0 },
        output_seq_len: measuredLength(summary.metrics.output_num_tokens),
        multi_turn: turns === null ? undefined : { enabled: turns.max > 1, max_turns: { distribution: 'other', value: turns.max, min: Math.round(turns.min), max: Math.max(1, Math.round(turns.max)) } },
        ...rateAndConcurrency(input.load, input.dataset.traced),
      },
      native: { args: { ...input.config } },
    },
  };
}

/** `results.request_performance.aggregate`: counts, lengths, latencies (ms, as vllm bench serve's converter), rates. */
function requestPerformance(summary: Summary): Record<string, unknown> {
  const m = summary.metrics;
  const aborted = summary.failed_by_kind.aborted;
  const rate = (units: string, mean: number): BrStatistics => ({ units, mean });
  return {
    aggregate: {
      requests: {
        total: summary.requests,
        failures: summary.failed - aborted,
        incomplete: aborted,
        input_length: statistics(m.input_num_tokens, 'count'),
        output_length: statistics(m.output_num_tokens, 'count'),
      },
      latency: {
        time_to_first_token: statistics(m.ttft_ms, 'ms'),
        time_per_output_token: statistics(m.tpot_ms, 'ms/token'),
        inter_token_latency: statistics(m.itl_ms, 'ms/token'),
        request_latency: statistics(m.e2el_ms, 'ms'),
      },
      throughput: {
        input_token_rate: rate('tokens/s', summary.runtime_sec > 0 ? summary.total_input_tokens / summary.runtime_sec : 0),
        output_token_rate: rate('tokens/s', summary.output_throughput),
        total_token_rate: rate('tokens/s', summary.total_token_throughput),
        request_rate: rate('queries/s', summary.request_throughput),
      },
    },
  };
}

/** `results.session_performance.sessions`: conversations as sessions, their turns as events. */
function sessionPerformance(input: LlmdReportInput): Record<string, unknown> {
  const { conversations, perConversation, summary } = input;
  const per = (read: (c: ConversationSummary) => number): Stats | null => describe(perConversation.map(read));
  return {
    sessions: {
      total: conversations.completed + conversations.failed + conversations.unfinished,
      succeeded: conversations.completed,
      failed: conversations.failed,
      total_events: summary.requests,
      total_events_completed: summary.completed,
      total_events_cancelled: summary.failed_by_kind.aborted,
      session_rate: { units: 'queries/s', mean: summary.runtime_sec > 0 ? conversations.completed / summary.runtime_sec : 0 },
      session_duration: statistics(per((c) => c.duration_ms), 's', 1 / 1000),
      events_per_session: statistics(per((c) => c.turns_completed + c.turns_failed), 'count'),
      input_tokens_per_session: statistics(per((c) => c.cumulative_input_tokens), 'count'),
      output_tokens_per_session: statistics(per((c) => c.cumulative_output_tokens), 'count'),
    },
  };
}

/**
 * `results.observability`: the server's prefix-cache hit rate as its answers reported it (Σ cached / Σ prompt
 * tokens), on the server's component; chatload's expected hit rate under an ad-hoc key (observability allows them).
 */
function observability(summary: Summary): Record<string, unknown> | undefined {
  const expected = summary.total_input_tokens > 0 ? summary.total_expected_cached_tokens / summary.total_input_tokens : null;
  if (summary.cache_hit_ratio === null && expected === null) return undefined;
  return {
    components: summary.cache_hit_ratio === null ? undefined : [{ component_label: 'server-0', aggregate: { cache_hit_rate: { units: 'fraction', mean: summary.cache_hit_ratio } } }],
    chatload_expected_cache_hit_rate: expected === null ? undefined : { units: 'fraction', mean: expected },
  };
}

/** The report as a plain object (undefined fields are left out when written). */
export function llmdReportDocument(input: LlmdReportInput): Record<string, unknown> {
  return {
    version: LLMD_REPORT_VERSION,
    run: runSection(input),
    scenario: scenarioSection(input),
    results: {
      request_performance: requestPerformance(input.summary),
      session_performance: sessionPerformance(input),
      observability: observability(input.summary),
    },
  };
}

/** A number as JSON writes it, with a point before any exponent: PyYAML (YAML 1.1) reads `1e-7` as a string. */
function numberText(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  const text = String(value);
  return text.includes('e') && !text.includes('.') ? text.replace('e', '.0e') : text;
}

/** `value` as indented JSON whose numbers PyYAML reads as numbers; undefined fields left out, as JSON.stringify does. */
function yamlSafeJson(value: unknown, indent: string): string {
  if (typeof value === 'number') return numberText(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => `${inner}${yamlSafeJson(v === undefined ? null : v, inner)}`).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${yamlSafeJson(v, inner)}`).join(',\n')}\n${indent}}`;
}

/**
 * The report's text: JSON, which is YAML too, the form llm-d-benchmark's import_benchmark_report reads (yaml.safe_load,
 * YAML 1.1: every number is written with a point before its exponent so it stays a number there).
 */
export function llmdReportText(document: Record<string, unknown>): string {
  return `${yamlSafeJson(document, '')}\n`;
}
