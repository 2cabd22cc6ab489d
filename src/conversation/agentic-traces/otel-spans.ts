import { DatasetError, type DatasetLocation } from '../../errors/index.js';
import { fieldError, isRecord } from './fields.js';

/*
 * Spans as the OTel loader needs them, from the two files that carry them:
 * - OTLP JSON (opentelemetry-proto, opentelemetry/proto/trace/v1/trace.proto in its JSON mapping; what the
 *   Collector's file exporter writes, one export request a line): `{resourceSpans: [{resource, scopeSpans: [{scope,
 *   spans: [{traceId, spanId, parentSpanId, name, startTimeUnixNano, endTimeUnixNano, attributes: [{key, value:
 *   {stringValue | intValue | doubleValue | boolValue | arrayValue}}]}]}]}]}`;
 * - inference-perf's trace files (docs/otel_trace_replay.md, examples/otel/test_traces/): `{trace_id, spans:
 *   [{trace_id, span_id, parent_span_id, name, start_time, end_time (ISO 8601), attributes: {key: value}}]}`.
 * Only the attributes the loader reads are kept, so message contents (gen_ai.input.messages) cost no memory.
 */

/** The attributes read (OpenTelemetry GenAI semantic conventions, plus the older usage names inference-perf reads). */
const KEPT = new Set([
  'gen_ai.operation.name',
  'gen_ai.request.model',
  'gen_ai.request.max_tokens',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.prompt_tokens',
  'gen_ai.usage.completion_tokens',
  'gen_ai.conversation.id',
  'gen_ai.agent.id',
  'gen_ai.agent.name',
  'gen_ai.tool.name',
  'gen_ai.response.finish_reasons',
]);

export interface Span {
  traceId: string;
  spanId: string;
  parentId: string | undefined;
  name: string;
  startMs: number;
  endMs: number;
  attrs: Map<string, unknown>;
  line: number | undefined;
}

/** An OTLP AnyValue as a plain value (intValue is a string in OTLP JSON: 64-bit). */
function anyValue(v: unknown): unknown {
  if (!isRecord(v)) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return typeof v.intValue === 'string' ? Number(v.intValue) : v.intValue;
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if (isRecord(v.arrayValue) && Array.isArray(v.arrayValue.values)) return v.arrayValue.values.map(anyValue);
  return undefined;
}

/** ns since the epoch (a decimal string or a number) as ms. */
function nanosToMs(v: unknown, field: string, at: DatasetLocation): number {
  const text = typeof v === 'number' ? String(v) : v;
  if (typeof text !== 'string' || !/^\d+$/.test(text)) throw fieldError(at, field, 'nanoseconds since the epoch (a decimal string)', v);
  return Number(BigInt(text) / 1000n) / 1000;
}

/** An ISO 8601 time (no zone: UTC, as inference-perf's examples are written) as ms. */
function isoToMs(v: unknown, field: string, at: DatasetLocation): number {
  const ms = typeof v === 'string' ? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`) : NaN;
  if (!Number.isFinite(ms)) throw fieldError(at, field, 'an ISO 8601 time', v);
  return ms;
}

function idOf(v: unknown, field: string, at: DatasetLocation): string {
  if (typeof v !== 'string' || v === '') throw fieldError(at, field, 'a non-empty id string', v);
  return v;
}

function otlpSpan(raw: unknown, at: DatasetLocation, where: string): Span {
  if (!isRecord(raw)) throw fieldError(at, where, 'a span object', raw);
  const spanId = idOf(raw.spanId, `${where}.spanId`, at);
  const attrs = new Map<string, unknown>();
  if (raw.attributes !== undefined && !Array.isArray(raw.attributes)) throw fieldError(at, `span ${spanId}: attributes`, 'a list of {key, value}', raw.attributes);
  for (const a of (raw.attributes as unknown[] | undefined) ?? []) if (isRecord(a) && typeof a.key === 'string' && KEPT.has(a.key)) attrs.set(a.key, anyValue(a.value));
  const parent = raw.parentSpanId;
  return {
    traceId: idOf(raw.traceId, `span ${spanId}: traceId`, at),
    spanId,
    parentId: typeof parent === 'string' && parent !== '' ? parent : undefined,
    name: typeof raw.name === 'string' ? raw.name : '',
    startMs: nanosToMs(raw.startTimeUnixNano, `span ${spanId}: startTimeUnixNano`, at),
    endMs: nanosToMs(raw.endTimeUnixNano ?? raw.startTimeUnixNano, `span ${spanId}: endTimeUnixNano`, at),
    attrs,
    line: at.line,
  };
}

function flatSpan(raw: unknown, at: DatasetLocation, where: string, traceId: unknown): Span {
  if (!isRecord(raw)) throw fieldError(at, where, 'a span object', raw);
  const spanId = idOf(raw.span_id, `${where}.span_id`, at);
  const attrs = new Map<string, unknown>();
  if (raw.attributes !== undefined && !isRecord(raw.attributes)) throw fieldError(at, `span ${spanId}: attributes`, 'an object', raw.attributes);
  for (const [k, v] of Object.entries((raw.attributes as Record<string, unknown> | undefined) ?? {})) if (KEPT.has(k)) attrs.set(k, v);
  const parent = raw.parent_span_id;
  return {
    traceId: idOf(raw.trace_id ?? traceId, `span ${spanId}: trace_id`, at),
    spanId,
    parentId: typeof parent === 'string' && parent !== '' ? parent : undefined,
    name: typeof raw.name === 'string' ? raw.name : '',
    startMs: isoToMs(raw.start_time, `span ${spanId}: start_time`, at),
    endMs: isoToMs(raw.end_time ?? raw.start_time, `span ${spanId}: end_time`, at),
    attrs,
    line: at.line,
  };
}

/** The spans of one document (an OTLP export request or an inference-perf trace file); `line` where it starts. */
export function spansOf(doc: unknown, file: string, line: number | undefined): Span[] {
  const at: DatasetLocation = { file, line };
  if (!isRecord(doc)) throw new DatasetError(at, 'expected OTel spans: an OTLP JSON object {"resourceSpans": [...]} or {"spans": [...]}');
  const out: Span[] = [];
  if (Array.isArray(doc.resourceSpans)) {
    doc.resourceSpans.forEach((rs: unknown, r) => {
      if (!isRecord(rs)) throw fieldError(at, `resourceSpans[${r}]`, 'an object {resource, scopeSpans}', rs);
      const scopes = rs.scopeSpans ?? rs.instrumentationLibrarySpans ?? [];
      if (!Array.isArray(scopes)) throw fieldError(at, `resourceSpans[${r}].scopeSpans`, 'a list', scopes);
      scopes.forEach((ss: unknown, s) => {
        const spans = isRecord(ss) ? ss.spans ?? [] : ss;
        if (!Array.isArray(spans)) throw fieldError(at, `resourceSpans[${r}].scopeSpans[${s}].spans`, 'a list of spans', spans);
        spans.forEach((sp: unknown, k) => out.push(otlpSpan(sp, at, `resourceSpans[${r}].scopeSpans[${s}].spans[${k}]`)));
      });
    });
    return out;
  }
  if (!Array.isArray(doc.spans)) throw fieldError(at, 'spans', 'a list of spans (or an OTLP "resourceSpans")', doc.spans);
  doc.spans.forEach((sp: unknown, k) => out.push(flatSpan(sp, at, `spans[${k}]`, doc.trace_id)));
  return out;
}
