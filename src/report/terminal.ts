import type { ClientHealth } from '../metrics/client-health.js';
import { ERROR_KINDS } from '../metrics/error-kinds.js';
import { slosText } from '../options/values/slos.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import type { RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import type { StatField, Stats } from '../metrics/stats.js';
import { answersAfterReasoning, SUMMARY_METRIC_ROWS, type Summary } from '../metrics/summary.js';
import { wrapText } from './table-fit.js';
import { replicasTable, routingLine } from './replicas-text.js';
import type { ReplicaRow } from '../metrics/replica-tally.js';
import { textTable } from './text-table.js';
import { gpuLine } from './gpu-text.js';
import type { GpuResults } from '../metrics/gpu-types.js';
import { counted } from '../util/plural.js';

/** What formatSummary prints. */
export interface TerminalSummaryInput {
  summary: Summary;
  perTurn: TurnSummary[];
  clientHealth: ClientHealth | null;
  /** The load's conversation counts, e.g. { completed: 10, unfinished: 2, not_started: 3 }. */
  conversations?: Record<string, number>;
  title?: string;
  /** The three views of the prefix-cache hit rate, with --scrape-metrics (results.json `server_metrics.cache_hit_rates`). */
  cacheHitRates?: { server_counters: number | null; response_usage: number | null; client_expected: number | null };
  /** Actual against expected cached tokens and the expected-cache model (results.json `prefix_cache`). */
  prefixCache?: RunPrefixCache;
  /** One row per replica behind a router (results.json `replicas`), when known. */
  replicas?: readonly ReplicaRow[] | null;
  /** GPU power and energy from a dcgm-exporter page (results.json `gpu`), when one was scraped. */
  gpu?: GpuResults | null;
}

/** The prefix-cache line: the model, what it expected (and the own-history figure), the shared share, the efficiencies. */
export function prefixCacheLine(p: RunPrefixCache): string {
  const pct = (x: number | null): string => (x === null ? 'n/a' : percentText(x));
  const m = p.model;
  const model = m.capacity_model === 'infinite' ? 'infinite' : `LRU ${m.capacity_tokens} tokens (${m.capacity_source})`;
  const t = p.totals;
  const capacity = m.capacity_model === 'infinite' ? '' : `, ${pct(t.expected_hit_ratio_infinite)} with no eviction`;
  const ids = m.token_ids === 'server' ? ", the server's token ids" : '';
  const efficiency = p.comparable === false ? `efficiency not comparable (${p.not_comparable})` : `efficiency ${pct(t.efficiency)} (${pct(t.efficiency_own_history)} against own history)`;
  return (
    `expected ${pct(t.expected_hit_ratio)} of input (${model}, ${m.block_size}-token blocks, ${m.scope}${ids}${capacity}) | ` +
    `own history alone ${pct(t.expected_hit_ratio_own_history)} | from other conversations ${pct(t.shared_prefix_share)} of the expected | ` +
    efficiency +
    missesText(t) +
    (t.warm_start_tokens > 0 ? ` | warm start ${t.warm_start_tokens} tokens (not the run's)` : '') +
    (t.beyond_expected_tokens > 0 ? ` | beyond expected ${t.beyond_expected_tokens} tokens (${counted(t.beyond_expected_requests, 'request')})` : '')
  );
}

/** ` | missed N tokens: cause n (x%), …` for the top three causes, or '' when nothing was missed. */
export function missesText(t: Pick<RunPrefixCache['totals'], 'misses'>): string {
  const { tokens, causes } = t.misses;
  if (tokens === 0) return '';
  const top = Object.entries(causes)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([cause, n]) => `${cause.replace(/_/g, ' ')} ${n} (${percentText(n / tokens)})`);
  return ` | missed ${tokens} tokens: ${top.join(', ')}`;
}

/** How to print: colour is decided once, by the caller (TTY and NO_COLOR), never here. */
export interface TerminalOptions {
  color: boolean;
  /**
   * The terminal's width in columns (terminalWidth): tables drop their least important columns to fit it and long
   * lines break onto indented continuation lines. Without it nothing is fitted (output to a file or a pipe).
   */
  width?: number;
}

/** The metrics table's columns, least important first: the ones dropped to fit a narrow terminal (metric, p50 and p99 stay). */
const METRIC_DROP_ORDER = ['p25', 'p75', 'std', 'min', 'p99.9', 'count', 'p90', 'max', 'mean'];
/** The per-turn table's, likewise (turn, ttft p50 and ttft p99 stay). */
const PER_TURN_DROP_ORDER = ['expected mean', 'cached mean', 'ttft p90', 'input mean', 'answer p50', 'failed', 'e2el p50', 'n', 'tpot p50', 'hit ratio'];

/** The indexes of `names` in `head`, in the order of `names` (names not in the header skipped). */
export function dropOrderOf(head: readonly string[], names: readonly string[]): number[] {
  return names.map((name) => head.indexOf(name)).filter((c) => c >= 0);
}

/** A header row's label and its padding: its continuation lines start under its value. */
const HEADER_INDENT = 17;

/** Per-turn tables longer than this show their first and last PER_TURN_EDGE_ROWS turns only. */
const PER_TURN_MAX_ROWS = 40;
const PER_TURN_EDGE_ROWS = 20;

/** As the reference: p99 needs 100 samples, p99.9 needs 1000; with fewer the column shows '-'. */
const MIN_COUNT_P99 = 100;
const MIN_COUNT_P99_9 = 1000;

const METRIC_ROWS = SUMMARY_METRIC_ROWS;

interface Palette {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  /** Whether the tables' header and borders are coloured. */
  color: boolean;
}

const ansi = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
const plain = (text: string): string => text;
const COLOR: Palette = {
  bold: ansi(1, 22),
  dim: ansi(2, 22),
  red: ansi(31, 39),
  yellow: ansi(33, 39),
  color: true,
};
const NO_COLOR: Palette = { bold: plain, dim: plain, red: plain, yellow: plain, color: false };

/**
 * The end-of-run summary as text: a header block (requests, failures by kind, runtime, throughputs, tokens, cache,
 * conversations), the metrics table, the per-turn table and the client's health. With color false there is no ANSI code.
 */
export function formatSummary(input: TerminalSummaryInput, options: TerminalOptions): string {
  const p = options.color ? COLOR : NO_COLOR;
  const reasoning = answersAfterReasoning(input.summary.metrics);
  const width = options.width;
  const parts = [wrapText(formatHeader(input, p), width, () => HEADER_INDENT), formatMetricsTable(input.summary, p, reasoning, width)];
  if (input.perTurn.length > 0) parts.push(formatPerTurnTable(input.perTurn, p, reasoning, width));
  // One replica (the embedded simulator says its index too) has nothing to compare: the table shows from two.
  if (input.replicas != null && input.replicas.length > 1) parts.push(replicasTable(input.replicas, { bold: p.bold, color: p.color, width }));
  if (input.clientHealth !== null) parts.push(wrapText(formatClientHealth(input.clientHealth, p), width));
  return `${parts.join('\n\n')}\n`;
}

function formatHeader(input: TerminalSummaryInput, p: Palette): string {
  const s = input.summary;
  const lines = [p.bold(input.title ?? 'chatload results')];
  const row = (label: string, value: string): void => {
    lines.push(`  ${label.padEnd(15)}${value}`);
  };
  const kinds = ERROR_KINDS.filter((k) => s.failed_by_kind[k] > 0).map((k) => `${k} ${s.failed_by_kind[k]}`);
  const failed = `failed ${s.failed}${kinds.length > 0 ? ` (${kinds.join(', ')})` : ''}`;
  row(
    'requests',
    `completed ${s.completed}, ${s.failed > 0 ? p.red(failed) : failed}` +
      (s.warmup_excluded > 0 ? `, warmup excluded ${s.warmup_excluded}` : ''),
  );
  row('runtime', `${s.runtime_sec.toFixed(3)} s`);
  row(
    'throughput',
    `${s.request_throughput.toFixed(3)} req/s | output ${s.output_throughput.toFixed(1)} tok/s | ` +
      `total ${s.total_token_throughput.toFixed(1)} tok/s`,
  );
  if (input.gpu != null) row('gpu', gpuLine(input.gpu));
  const src = s.token_sources;
  row(
    'tokens',
    `input ${s.total_input_tokens} (${sourceText(src.input)}) | output ${s.total_output_tokens} (${sourceText(src.output)})`,
  );
  const hit =
    s.cache_hit_ratio === null
      ? 'hit ratio n/a (server reports no cached tokens)'
      : `hit ratio ${percentText(s.cache_hit_ratio)} (${counted(s.total_cached_tokens, 'cached token')}, ${counted(s.cached_tokens_known, 'request')} reporting)`;
  const efficiency = s.cache_efficiency === null ? 'efficiency n/a' : `efficiency ${percentText(s.cache_efficiency)} of expected`;
  row('cache', `${hit} | ${efficiency} | expected ${s.total_expected_cached_tokens} tokens`);
  if (input.prefixCache !== undefined) row('prefix cache', prefixCacheLine(input.prefixCache));
  const routing = input.prefixCache?.routing;
  if (routing != null && routing.replicas > 1) row('routing', routingLine(routing));
  if (input.cacheHitRates !== undefined) row('server cache', cacheHitRatesText(input.cacheHitRates));
  if (s.goodput !== null) {
    const slos = slosText(s.goodput.slos);
    row('goodput', `${counted(s.goodput.good_requests, 'request')} met ${slos} (${percentText(s.goodput.share)}) | ${s.goodput.request_goodput.toFixed(3)} req/s`);
  }
  const lag = s.metrics.schedule_lag_ms;
  if (lag !== null) {
    const queue = s.metrics.queue_ms;
    const fromSchedule = s.metrics.e2el_from_scheduled_ms;
    row(
      'schedule',
      `lag p50 ${lag.p50.toFixed(2)} ms, p99 ${lag.p99.toFixed(2)} ms | queue p99 ${(queue?.p99 ?? 0).toFixed(2)} ms | ` +
        `E2EL from schedule p99 ${(fromSchedule?.p99 ?? 0).toFixed(1)} ms`,
    );
  }
  if (input.conversations !== undefined && Object.keys(input.conversations).length > 0) {
    // Drops happen only with --max-queue: said when there are any.
    const counts = Object.entries(input.conversations).filter(([k, v]) => k !== 'dropped' || v > 0);
    row('conversations', counts.map(([k, v]) => `${k} ${v}`).join(', '));
  }
  // Results files written before the field existed lack it.
  const approximate = (s.approximate_metrics ?? []).filter((m) => m !== 'ttft_by_context');
  if (approximate.length > 0) row('percentiles', `from histograms, within 0.1%: ${approximate.map((m) => m.replace(/_ms$/, '')).join(', ')} (docs/METRICS.md)`);
  return lines.join('\n');
}

/** `reasoning`: the model reasoned first, so the time to the answer (ttft_content_ms) gets its row after TTFT. */
function formatMetricsTable(s: Summary, p: Palette, reasoning: boolean, width: number | undefined): string {
  const head = ['metric', 'count', 'mean', 'std', 'min', 'p25', 'p50', 'p75', 'p90', 'p99', 'p99.9', 'max'];
  const table: string[][] = [];
  const rows = reasoning ? METRIC_ROWS.flatMap((m) => (m === 'ttft_ms' ? [m, 'ttft_content_ms' as const] : [m])) : METRIC_ROWS;
  for (const name of rows) {
    const stats = s.metrics[name];
    const num = name.endsWith('_ms') ? ms : count;
    if (stats === null) {
      table.push([name, '0', ...new Array<string>(10).fill('-')]);
      continue;
    }
    table.push([
      name,
      String(stats.count),
      num(stats.mean),
      num(stats.std),
      num(stats.min),
      num(stats.p25),
      num(stats.p50),
      num(stats.p75),
      num(stats.p90),
      stats.count >= MIN_COUNT_P99 ? num(stats.p99) : '-',
      stats.count >= MIN_COUNT_P99_9 ? num(stats.p99_9) : '-',
      num(stats.max),
    ]);
  }
  const fit = width === undefined ? undefined : { width, dropOrder: dropOrderOf(head, METRIC_DROP_ORDER) };
  return textTable(table, { head, align: ['left', ...new Array<'right'>(head.length - 1).fill('right')], color: p.color, fit });
}

function formatPerTurnTable(perTurn: readonly TurnSummary[], p: Palette, reasoning: boolean, width: number | undefined): string {
  const head = ['turn', 'n', 'failed', 'ttft p50', 'ttft p90', 'ttft p99', ...(reasoning ? ['answer p50'] : []), 'tpot p50', 'e2el p50', 'input mean', 'cached mean'];
  head.push('expected mean', 'hit ratio');
  const table: string[][] = [];
  const rows =
    perTurn.length > PER_TURN_MAX_ROWS
      ? [...perTurn.slice(0, PER_TURN_EDGE_ROWS), null, ...perTurn.slice(-PER_TURN_EDGE_ROWS)]
      : perTurn;
  for (const t of rows) {
    if (t === null) {
      table.push(new Array<string>(head.length).fill('…'));
      continue;
    }
    const ttft = t.ttft_ms;
    table.push([
      String(t.turn),
      String(t.completed),
      t.failed > 0 ? p.red(String(t.failed)) : '0',
      stat(ttft, 'p50', ms),
      stat(ttft, 'p90', ms),
      ttft !== null && ttft.count >= MIN_COUNT_P99 ? ms(ttft.p99) : '-',
      ...(reasoning ? [stat(t.ttft_content_ms ?? null, 'p50', ms)] : []),
      stat(t.tpot_ms, 'p50', ms),
      stat(t.e2el_ms, 'p50', ms),
      stat(t.input_num_tokens, 'mean', count),
      stat(t.cached_tokens, 'mean', count),
      stat(t.expected_cached_tokens, 'mean', count),
      t.cache_hit_ratio === null ? '-' : percentText(t.cache_hit_ratio),
    ]);
  }
  const fit = width === undefined ? undefined : { width, dropOrder: dropOrderOf(head, PER_TURN_DROP_ORDER) };
  return `${p.bold('per turn')} (latencies ms, tokens)\n${textTable(table, { head, align: new Array<'right'>(head.length).fill('right'), color: p.color, fit })}`;
}

function formatClientHealth(h: ClientHealth, p: Palette): string {
  const d = h.event_loop_delay_ms;
  const line =
    `${p.bold('client')}  event-loop delay p50 ${d.p50.toFixed(2)} ms, p99 ${d.p99.toFixed(2)} ms, max ${d.max.toFixed(2)} ms | ` +
    `CPU ${h.cpu_percent_of_one_core.toFixed(0)}% of one core | max RSS ${h.max_rss_mb.toFixed(0)} MB`;
  const resends = h.stale_connection_resends ?? 0;
  // Not a warning: the requests succeeded; it says why connections were not reused (docs/ENGINES.md).
  const stale =
    resends > 0
      ? [`  note: ${resends} request${resends === 1 ? ' was' : 's were'} resent on a fresh connection: the server closed kept-alive connections after its responses`]
      : [];
  return [line, ...stale, ...h.warnings.map((w) => p.yellow(`  warning: ${w}`))].join('\n');
}

/** Milliseconds with 2 decimals (the reference's display precision). */
function ms(value: number): string {
  return value.toFixed(2);
}

/** Token counts: integers as they are, means and interpolated percentiles with 2 decimals. */
function count(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

function stat(stats: Stats | null, field: StatField, format: (value: number) => string): string {
  return stats === null ? '-' : format(stats[field]);
}

function percentText(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}

function sourceText(counts: { server: number; local: number }): string {
  if (counts.local === 0 && counts.server === 0) return 'no requests';
  if (counts.local === 0) return 'server';
  if (counts.server === 0) return 'local count';
  return `server ${counts.server}, local ${counts.local}`;
}

/** The prefix-cache hit rate three ways, as the summary's "server cache" row says them. */
export function cacheHitRatesText(rates: NonNullable<TerminalSummaryInput['cacheHitRates']>): string {
  const pct = (x: number | null): string => (x === null ? 'n/a' : percentText(x));
  return `hit rate ${pct(rates.server_counters)} by its /metrics counters | ${pct(rates.response_usage)} by usage | ${pct(rates.client_expected)} possible by the history`;
}
