/*
 * The agentic trace formats (docs/DATASETS.md, "Agentic traces"): sessions whose requests carry tool calls and
 * sub-agents, replayed as trace sessions with forks. Their loaders live beside this file, one a format.
 */

/** `weka`: Weka/Claude-Code traces; `otel`: OpenTelemetry GenAI spans; `mooncake-toolagent`: Mooncake's tool-and-agent trace. */
export type AgenticTraceFormat = 'weka' | 'otel' | 'mooncake-toolagent';

export const AGENTIC_TRACE_FORMATS: readonly AgenticTraceFormat[] = ['weka', 'otel', 'mooncake-toolagent'];

/**
 * Default tokens per hash block: a Weka trace names its own (`block_size`; 64 when it does not, inference-perf's
 * `default_block_size`), Mooncake's is 512, and OTel spans carry no hash ids, so their blocks are chatload's (16).
 */
export const DEFAULT_AGENTIC_BLOCK_SIZE: Readonly<Record<AgenticTraceFormat, number>> = { weka: 64, otel: 16, 'mooncake-toolagent': 512 };

/** True for a format name of this file. */
export function isAgenticTraceFormat(format: string | undefined): format is AgenticTraceFormat {
  return format !== undefined && (AGENTIC_TRACE_FORMATS as readonly string[]).includes(format);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The agentic format a parsed JSON value (a JSONL row or a whole document) looks like, or undefined. Mooncake's
 * tool-and-agent trace has the very fields of any Mooncake trace, so it is never detected: name it.
 */
export function detectAgenticTraceFormat(value: unknown): AgenticTraceFormat | undefined {
  if (!isRecord(value)) return undefined;
  if (Array.isArray(value.requests) && 'block_size' in value && 'id' in value) return 'weka';
  if (Array.isArray(value.resourceSpans)) return 'otel';
  if (Array.isArray(value.spans) && value.spans.some((s) => isRecord(s) && ('span_id' in s || 'spanId' in s))) return 'otel';
  return undefined;
}
