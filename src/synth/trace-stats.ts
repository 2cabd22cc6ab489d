import { withForks } from '../conversation/forks.js';
import type { Conversation, TraceSession, TraceTurn } from '../conversation/types.js';
import type { CsvTraceColumns } from '../conversation/trace-csv-reader.js';
import type { CsvTraceCounts } from '../conversation/trace-csv.js';
import { TracePrefixCache } from '../prefix-cache/trace-blocks.js';
import { describe, type Stats } from '../metrics/stats.js';
import { counted } from '../util/plural.js';
import { describeCsvCounts } from '../conversation/trace-csv-reader.js';

/*
 * `chatload trace stats`: what a production trace asks of a server, from the trace alone (AIPerf's analyze-trace):
 * input and output lengths, the request rate over time, and the theoretical prefix-cache hit ratio of its hash ids.
 */

/** One bin of the request rate over time. */
export interface RateBin {
  /** Start of the bin, seconds from the trace's start. */
  startSec: number;
  requests: number;
  /** requests / bin width. */
  perSec: number;
}

/** The theoretical prefix-cache hits of a trace, over its requests in time order. */
export interface CacheHits {
  /** Input tokens of the requests counted (those made of hash blocks). */
  inputTokens: number;
  /** Tokens in leading full blocks seen before (block size each). */
  hitTokens: number;
  /** hitTokens / inputTokens (0 for no input). */
  hitRatio: number;
}

/** What `trace stats` reports. */
export interface TraceStats {
  format: TraceSession['format'];
  /** Tokens a hash block; null for a trace with no hash ids (Azure, BurstGPT). */
  blockSize: number | null;
  /**
   * False for a trace that carries no prefix structure (Azure, BurstGPT: no hash ids): a replay makes each prompt
   * of its own blocks, so no prefix is shared and the theoretical hit ratio is 0 by construction, not measured.
   */
  prefixStructure: boolean;
  /** A CSV trace's rows and those left out (failed, --trace-filter, --trace-window). */
  rows?: CsvTraceCounts;
  /** Every request, sub-agents' too. */
  requests: number;
  sessions: number;
  /** Agentic traces: sub-agents (forks), and turns answering a tool call. */
  agentic?: { subAgents: number; toolResults: number };
  /** From the first request to the last, seconds (delays after answers count as if answers took no time). */
  durationSec: number;
  meanRatePerSec: number;
  inputLength: Stats | null;
  outputLength: Stats | null;
  rate: RateBin[];
  /** An unbounded cache. */
  infinite: CacheHits;
  /** A cache of `kvCacheTokens` tokens (LRU), when asked for. */
  bounded?: CacheHits & { kvCacheTokens: number };
}

/** A request of the trace at its (approximate) time. */
export interface Timed {
  turn: TraceTurn;
  atMs: number;
  order: number;
  inputLength: number;
  outputLength: number;
  hashIds: readonly number[];
  blocks: boolean;
}

/** The trace's requests in time order; a session's later turns without a timestamp follow the previous one by their delay. */
export function timedRequests(conversations: readonly Conversation[]): Timed[] {
  const out: Timed[] = [];
  for (const c of withForks(conversations)) {
    const trace = c.trace;
    if (trace === undefined) continue;
    let at = 0;
    for (const turn of trace.turns) {
      at = turn.atMs ?? at + (turn.delayMs ?? 0);
      out.push({ turn, atMs: at, order: out.length, inputLength: turn.inputLength, outputLength: turn.outputLength, hashIds: turn.hashIds, blocks: turn.messages === undefined });
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
}

/**
 * The theoretical hits of `requests` (in time order) on `cache`: each request's leading full blocks already cached,
 * counted before its own blocks are cached. The same count a trace replay gives each request's expected cached tokens.
 */
function cacheHits(requests: readonly Timed[], blockSize: number, cache: TracePrefixCache): CacheHits {
  let inputTokens = 0;
  let hitTokens = 0;
  for (const r of requests) {
    if (!r.blocks) continue;
    inputTokens += r.inputLength;
    hitTokens += cache.access(r.hashIds, Math.floor(r.inputLength / blockSize)) * blockSize;
  }
  return { inputTokens, hitTokens, hitRatio: inputTokens > 0 ? hitTokens / inputTokens : 0 };
}

/** Sub-agents and tool-result turns of an agentic trace (docs/DATASETS.md, "Agentic traces"); {} for the others. */
function agenticCounts(conversations: readonly Conversation[]): Pick<TraceStats, 'agentic'> {
  const format = conversations[0]?.trace?.format;
  if (format === 'mooncake' || format === 'bailian') return {};
  let subAgents = 0;
  let toolResults = 0;
  for (const c of withForks(conversations)) {
    if (c.parent !== undefined) subAgents += 1;
    for (const turn of c.trace?.turns ?? []) if (turn.toolResult === true) toolResults += 1;
  }
  return { agentic: { subAgents, toolResults } };
}

/** A bin width of about 1/20 of the trace, at least one second, in whole seconds below a minute. */
function binSeconds(durationSec: number): number {
  const raw = Math.max(1, durationSec / 20);
  return raw < 60 ? Math.ceil(raw) : Math.ceil(raw / 60) * 60;
}

/** The request rate over time of requests at `atMs` (ms, ascending), and the span from the first to the last. */
function rateOver(atMs: ArrayLike<number>): { durationSec: number; rate: RateBin[] } {
  const n = atMs.length;
  const durationSec = n > 0 ? (atMs[n - 1]! - atMs[0]!) / 1000 : 0;
  const width = binSeconds(durationSec);
  const rate: RateBin[] = [];
  const t0 = n > 0 ? atMs[0]! : 0;
  for (let i = 0; i < n; i++) {
    const bin = Math.floor((atMs[i]! - t0) / 1000 / width);
    while (rate.length <= bin) rate.push({ startSec: rate.length * width, requests: 0, perSec: 0 });
    rate[bin]!.requests += 1;
  }
  for (const bin of rate) bin.perSec = bin.requests / width;
  return { durationSec, rate };
}

/**
 * The statistics of a CSV trace's kept rows (Azure, BurstGPT): no hash ids, so no prefix structure: every prompt is
 * made of its own blocks and the theoretical hit ratio is 0 by construction.
 */
export function csvTraceStats(columns: CsvTraceColumns): TraceStats {
  const atMs = Float64Array.from(columns.atSec, (s) => s * 1000).sort();
  const { durationSec, rate } = rateOver(atMs);
  let inputTokens = 0;
  for (const n of columns.inputLength) inputTokens += n;
  return {
    format: columns.format,
    blockSize: null,
    prefixStructure: false,
    rows: columns.counts,
    requests: atMs.length,
    sessions: atMs.length,
    durationSec,
    meanRatePerSec: durationSec > 0 ? atMs.length / durationSec : 0,
    inputLength: describe(columns.inputLength),
    outputLength: describe(columns.outputLength),
    rate,
    infinite: { inputTokens, hitTokens: 0, hitRatio: 0 },
  };
}

/** The statistics of a loaded trace (Conversations with a `trace`). `kvCacheTokens` adds the bounded cache's hits. */
export function traceStats(conversations: readonly Conversation[], kvCacheTokens?: number): TraceStats {
  const first = conversations.find((c) => c.trace !== undefined)?.trace;
  if (first === undefined) throw new Error('traceStats: the conversations are no trace');
  const requests = timedRequests(conversations);
  const blockSize = first.blockSize;
  const { durationSec, rate } = rateOver(requests.map((r) => r.atMs));
  const stats: TraceStats = {
    ...agenticCounts(conversations),
    format: first.format,
    blockSize,
    prefixStructure: true,
    requests: requests.length,
    sessions: conversations.length,
    durationSec,
    meanRatePerSec: durationSec > 0 ? requests.length / durationSec : 0,
    inputLength: describe(requests.filter((r) => r.blocks).map((r) => r.inputLength)),
    outputLength: describe(requests.map((r) => r.outputLength)),
    rate,
    infinite: cacheHits(requests, blockSize, new TracePrefixCache()),
  };
  if (kvCacheTokens !== undefined) {
    stats.bounded = { ...cacheHits(requests, blockSize, new TracePrefixCache(Math.floor(kvCacheTokens / blockSize))), kvCacheTokens };
  }
  return stats;
}

/** Cache hits as `--json` prints them. */
export interface CacheHitsJson {
  input_tokens: number;
  hit_tokens: number;
  hit_ratio: number;
}

/** What `trace stats --json` prints: TraceStats with snake_case keys, as results.json and every other JSON of chatload. */
export interface TraceStatsJson {
  format: TraceSession['format'];
  block_size: number | null;
  prefix_structure: boolean;
  /** A CSV trace's rows: read, failed ones skipped, left out by --trace-filter and by --trace-window. */
  rows?: { rows: number; failed_skipped: number; filtered_out: number; outside_window: number };
  requests: number;
  sessions: number;
  /** Agentic traces only. */
  sub_agents?: number;
  tool_results?: number;
  duration_sec: number;
  mean_rate_per_sec: number;
  input_length: Stats | null;
  output_length: Stats | null;
  rate: Array<{ start_sec: number; requests: number; per_sec: number }>;
  infinite: CacheHitsJson;
  bounded?: CacheHitsJson & { kv_cache_tokens: number };
}

const hitsJson = (h: CacheHits): CacheHitsJson => ({ input_tokens: h.inputTokens, hit_tokens: h.hitTokens, hit_ratio: h.hitRatio });

/** The statistics for `trace stats --json`. */
export function traceStatsJson(stats: TraceStats): TraceStatsJson {
  const json: TraceStatsJson = {
    format: stats.format,
    block_size: stats.blockSize,
    prefix_structure: stats.prefixStructure,
    requests: stats.requests,
    sessions: stats.sessions,
    duration_sec: stats.durationSec,
    mean_rate_per_sec: stats.meanRatePerSec,
    input_length: stats.inputLength,
    output_length: stats.outputLength,
    rate: stats.rate.map((b) => ({ start_sec: b.startSec, requests: b.requests, per_sec: b.perSec })),
    infinite: hitsJson(stats.infinite),
  };
  if (stats.agentic !== undefined) Object.assign(json, { sub_agents: stats.agentic.subAgents, tool_results: stats.agentic.toolResults });
  if (stats.bounded !== undefined) json.bounded = { ...hitsJson(stats.bounded), kv_cache_tokens: stats.bounded.kvCacheTokens };
  const rows = stats.rows;
  if (rows !== undefined) json.rows = { rows: rows.rows, failed_skipped: rows.failedSkipped, filtered_out: rows.filteredOut, outside_window: rows.outsideWindow };
  return json;
}

function fmt(n: number | undefined, digits = 0): string {
  return n === undefined ? '-' : n.toFixed(digits);
}

function statsLine(name: string, s: Stats | null): string {
  if (s === null) return `  ${name.padEnd(14)} -`;
  return `  ${name.padEnd(14)} min ${fmt(s.min)}  mean ${fmt(s.mean, 1)}  p50 ${fmt(s.p50)}  p90 ${fmt(s.p90)}  p99 ${fmt(s.p99)}  max ${fmt(s.max)}`;
}

/** The statistics as text for the terminal. */
export function formatTraceStats(stats: TraceStats, source: string): string {
  const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
  const rate = `over ${stats.durationSec.toFixed(1)} s (${stats.meanRatePerSec.toFixed(2)} req/s)`;
  const head = stats.prefixStructure
    ? `${source}: ${stats.format} trace, ${counted(stats.requests, 'request')} in ${counted(stats.sessions, 'session')} ${rate}, ${stats.blockSize} tokens a block`
    : `${source}: ${stats.format} trace, ${counted(stats.requests, 'request')} ${rate}`;
  const lines = [head];
  if (stats.rows !== undefined) lines.push(`  rows           ${describeCsvCounts(stats.rows)}`);
  if (stats.agentic !== undefined) lines.push(`  agentic        ${counted(stats.agentic.subAgents, 'sub-agent')} (forks), ${counted(stats.agentic.toolResults, 'tool-result turn')}`);
  lines.push(statsLine('input tokens', stats.inputLength), statsLine('output tokens', stats.outputLength));
  if (stats.prefixStructure) {
    lines.push(`  prefix cache   theoretical hit ratio ${pct(stats.infinite.hitRatio)} (${stats.infinite.hitTokens} of ${stats.infinite.inputTokens} input tokens, unbounded cache)`);
  } else {
    lines.push(
      '  prefix cache   none: this trace carries no prefix structure (no hash ids), so a replay builds each prompt at its exact',
      '                 token count with no shared prefix; the theoretical hit ratio is not computable (0% by construction)',
    );
  }
  if (stats.bounded !== undefined) {
    lines.push(`                 with --kv-cache-tokens ${stats.bounded.kvCacheTokens}: ${pct(stats.bounded.hitRatio)} (${stats.bounded.hitTokens} tokens, LRU)`);
  }
  lines.push('  request rate over time (req/s)');
  const peak = Math.max(...stats.rate.map((b) => b.perSec), 0);
  for (const bin of stats.rate) {
    const bar = peak > 0 ? '#'.repeat(Math.round((40 * bin.perSec) / peak)) : '';
    lines.push(`    ${fmt(bin.startSec).padStart(7)} s  ${bin.perSec.toFixed(2).padStart(8)}  ${bar}`);
  }
  return lines.join('\n');
}
