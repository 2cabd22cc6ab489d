import type { ClientHealth } from '../metrics/client-health.js';
import { agenticSectionHtml } from './agentic-html.js';
import { ERROR_KINDS } from '../metrics/error-kinds.js';
import type { TurnSummary } from '../metrics/per-turn.js';
import type { RequestRecord } from '../metrics/record.js';
import type { Stats } from '../metrics/stats.js';
import { answersAfterReasoning, type Summary } from '../metrics/summary.js';
import { distributionCharts, perTurnCharts, sampleText, timeSeriesCharts, type RecordSample } from './html-charts.js';
import { escapeHtml, fmtNum, fmtPercent, htmlPage, htmlTable, pageSections, type Cell, type PageSection } from './html-util.js';
import { percentileSupported } from '../metrics/percentile-support.js';
import { commandLineOf, optionRow } from '../options/command-line.js';
import { prefixCacheHtml } from './prefix-cache-html.js';
import { replicasHtml } from './replicas-html.js';
import { gpuHtml } from './gpu-html.js';
import type { RunData } from '../store/run-data.js';
import { chatloadVersion } from '../util/version.js';
import { counted } from '../util/plural.js';
import { stopText } from './stop-text.js';
import { errorShape } from '../metrics/error-tally.js';

/** Rows of the metrics table, in order, with their unit. */
const METRIC_ROWS = [
  ['ttft_ms', 'ms'],
  ['tpot_ms', 'ms'],
  ['itl_ms', 'ms'],
  ['e2el_ms', 'ms'],
  ['input_num_tokens', 'tokens'],
  ['output_num_tokens', 'tokens'],
  ['cached_tokens', 'tokens'],
  ['expected_cached_tokens', 'tokens'],
] as const;

const STATS_COLUMNS = ['count', 'mean', 'std', 'min', 'p25', 'p50', 'p75', 'p90', 'p99', 'p99_9', 'max'] as const;

/** Failed requests listed individually in the errors section; the grouped table covers them all. */
const MAX_ERROR_ROWS = 200;
/** Distinct (kind, status, message) groups shown. */
const MAX_ERROR_GROUPS = 100;
/** Error messages are cut to this many characters in tables. */
const MAX_MESSAGE_CHARS = 300;

/**
 * The run's report as one self-contained HTML page (string): configuration, summary, per-turn charts, distributions,
 * time series, client health and errors. Charts are inline SVG; the page has no script and a CSP that blocks every
 * fetch. All text from the run (model, dataset, ids, error messages, config) is escaped.
 */
export function renderHtmlReport(data: RunData): string {
  const model = typeof data.facts.model === 'string' ? data.facts.model : undefined;
  const title = `chatload report${model === undefined ? '' : `: ${model}`}`;
  const subtitle = [
    `run ${data.label}`,
    typeof data.facts.dataset === 'string' ? `dataset ${data.facts.dataset}` : undefined,
    typeof data.facts.created_at === 'string' ? `created ${data.facts.created_at}` : undefined,
    typeof data.facts.stop_reason === 'string' ? `stopped: ${stopText(data.facts.stop_reason, data.conversations)}` : data.finished ? undefined : 'did not finish',
  ]
    .filter((x) => x !== undefined)
    .join(' · ');

  const perTurn = perTurnCharts(data.perTurn);
  // A run with more records than loadRunData keeps is charted from its uniform sample (RunData.sampled).
  const sample: RecordSample | null = data.sampled ? { size: data.records.length, total: data.recordsTotal } : null;
  const distributions = data.hasRecords ? distributionCharts(data.records, sample) : [];
  const overTime = data.hasRecords ? timeSeriesCharts(data.records, sample) : [];

  // The page is a list of sections; the nav is made from it, so a new section (prefix cache, tool calls) is one push.
  // Agentic runs (issue #14): steps by context length and sessions' context growth, in their own section.
  const agentic = agenticSectionHtml(data.records);
  const replicas = replicasHtml(data.replicas, data.routing);
  const gpu = gpuHtml(data.gpu);
  const sections: PageSection[] = [
    { id: 'summary', title: 'Summary', html: summaryCards(data.summary, data.conversations) + metricsTable(data.summary) },
    {
      id: 'per-turn',
      title: 'Per turn',
      html:
        chartGrid(perTurn, 'No per-turn data.') +
        (data.perTurn.length > 0 ? `<h3>Per-turn table</h3>${perTurnTable(data.perTurn, answersAfterReasoning(data.summary.metrics))}` : ''),
    },
    { id: 'prefix-cache', title: 'Prefix cache', html: prefixCacheHtml(data.prefixCache) },
    ...(replicas === '' ? [] : [{ id: 'replicas', title: 'Replicas', html: replicas }]),
    ...(gpu === '' ? [] : [{ id: 'gpu', title: 'GPU power and energy', nav: 'GPU', html: gpu }]),
    ...(agentic === '' ? [] : [{ id: 'agentic', title: 'Agentic sessions', nav: 'Agentic', html: agentic }]),
    { id: 'distributions', title: 'Distributions', html: chartGrid(distributions, 'No completed requests to chart.') },
    { id: 'over-time', title: 'Over time', html: chartGrid(overTime, 'No requests to chart.') },
    { id: 'client', title: 'Client health', html: clientHealthHtml(data.clientHealth) },
    { id: 'errors', title: 'Errors', nav: `Errors (${data.summary.failed})`, html: errorsHtml(data.summary, data.records, data.hasRecords, sample) },
    { id: 'config', title: 'Run and configuration', nav: 'Configuration', html: configHtml(data) },
  ];
  const page = pageSections(sections);

  return htmlPage({
    title,
    subtitle,
    nav: page.nav,
    body: `${commandLineHtml(data.config)}${banners(data)}\n${page.body}`,
    footer:
      `Generated by chatload ${chatloadVersion()} from ${data.label}${data.finished ? '' : ' (unfinished run)'}` +
      `${sample === null ? '' : `; charts from ${sampleText(sample)}`}. Definitions: docs/METRICS.md.`,
  });
}

/** The command line that ran this, rebuilt from results.json's config with the user's flag names. */
function commandLineHtml(config: Record<string, unknown>): string {
  if (Object.keys(config).length === 0) return '';
  return `<div class="cmd" title="reconstructed from results.json's config: options that differ from their defaults"><code>${escapeHtml(commandLineOf(config))}</code></div>`;
}

function chartGrid(figures: readonly string[], empty: string): string {
  return figures.length === 0 ? `<p class="muted">${escapeHtml(empty)}</p>` : `<div class="charts">\n${figures.join('\n')}\n</div>`;
}

function banners(data: RunData): string {
  const parts: string[] = [];
  if (!data.finished) {
    // The first warning says why, and starts with the same words (store/run-data.ts): said once.
    const why = (data.warnings[0] ?? '').replace(/^The run did not finish: /, '');
    parts.push(`<div class="banner bad"><strong>This run did not finish:</strong> ${escapeHtml(why)}</div>`);
  }
  const rest = data.finished ? data.warnings : data.warnings.slice(1);
  const health = data.clientHealth?.warnings ?? [];
  const all = [...rest, ...health];
  if (all.length > 0) {
    parts.push(`<div class="banner"><strong>Warnings</strong><ul>${all.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul></div>`);
  }
  return parts.join('\n');
}

function card(label: string, value: string, kind: '' | 'bad' | 'wide' = ''): string {
  return `<div class="card${kind === '' ? '' : ` ${kind}`}"><div class="k">${escapeHtml(label)}</div><div class="v">${escapeHtml(value)}</div></div>`;
}

function summaryCards(s: Summary, conversations: Record<string, number>): string {
  const cards = [
    card('requests', String(s.requests)),
    card('completed', String(s.completed)),
    card('failed', `${s.failed} (${fmtPercent(s.error_rate)})`, s.failed > 0 ? 'bad' : ''),
    card('runtime', `${fmtNum(s.runtime_sec, 2)} s`),
    card('request throughput', `${fmtNum(s.request_throughput, 2)} req/s`),
    card('output throughput', `${fmtNum(s.output_throughput, 1)} tok/s`),
    card('total throughput', `${fmtNum(s.total_token_throughput, 1)} tok/s`),
    card('TTFT p50 / p99', `${fmtNum(s.metrics.ttft_ms?.p50)} / ${p99Text(s.metrics.ttft_ms)} ms`),
    card('TPOT p50 / p99', `${fmtNum(s.metrics.tpot_ms?.p50)} / ${p99Text(s.metrics.tpot_ms)} ms`),
    // A reasoning model's first token is thinking: the wait for the answer itself is its own figure.
    ...(answersAfterReasoning(s.metrics)
      ? [card('time to answer p50 / p99', `${fmtNum(s.metrics.ttft_content_ms?.p50)} / ${p99Text(s.metrics.ttft_content_ms)} ms`)]
      : []),
    card('cache hit ratio', s.cache_hit_ratio === null ? 'n/a' : fmtPercent(s.cache_hit_ratio)),
    card('cache efficiency', s.cache_efficiency === null ? 'n/a' : fmtPercent(s.cache_efficiency)),
  ];
  if (s.warmup_excluded > 0) cards.push(card('warmup excluded', String(s.warmup_excluded)));
  const { total, ...byState } = conversations;
  const states = Object.entries(byState).map(([k, v]) => `${v} ${k.replace('_', ' ')}`);
  if (total !== undefined || states.length > 0) cards.push(card(`conversations${total === undefined ? '' : ` (${total})`}`, states.join(', '), 'wide'));
  return `<div class="cards">${cards.join('')}</div>`;
}

/** A p99 shown only from 100 values (as the terminal): '-' below. */
function p99Text(stats: Stats | null | undefined): string {
  return stats === null || stats === undefined || !percentileSupported(99, stats.count) ? '-' : fmtNum(stats.p99);
}

/** The percentile of a stats column (p99_9 → 99.9), or null for the columns that are not tail percentiles. */
function tailPercentile(column: string): number | null {
  return column === 'p99' ? 99 : column === 'p99_9' ? 99.9 : null;
}

function metricsTable(s: Summary): string {
  type Row = readonly [keyof Summary['metrics'], 'ms' | 'tokens'];
  const shown: readonly Row[] = answersAfterReasoning(s.metrics)
    ? METRIC_ROWS.flatMap((row): Row[] => (row[0] === 'ttft_ms' ? [row, ['ttft_content_ms', 'ms']] : [row]))
    : METRIC_ROWS;
  const rows: Cell[][] = shown.map(([key, unit]) => {
    const stats: Stats | null | undefined = s.metrics?.[key];
    const digits = unit === 'ms' ? 2 : 1;
    if (stats === null || stats === undefined) return [key, 0, ...STATS_COLUMNS.slice(1).map(() => '-')];
    // p99 and p99.9 only where the count supports them (100 and 1,000 values), as the terminal shows them.
    const shown = (c: (typeof STATS_COLUMNS)[number]): string => {
      const p = tailPercentile(c);
      return p !== null && !percentileSupported(p, stats.count) ? '-' : fmtNum(stats[c], digits);
    };
    return [key, ...STATS_COLUMNS.map((c) => ({ text: shown(c), className: 'num' }))];
  });
  const tokenNote =
    `Tokens: input ${s.total_input_tokens}, output ${s.total_output_tokens}, cached ${s.total_cached_tokens} ` +
    `(${counted(s.cached_tokens_known, 'request')} reporting), expected cached ${s.total_expected_cached_tokens}. ` +
    'Latencies in ms over completed non-warmup requests; std is the sample std (ddof 1); p99 needs 100 values and p99.9 1,000 (else -).';
  return `${htmlTable(['metric', ...STATS_COLUMNS.map((c) => c.replace('_', '.'))], rows)}<p class="note">${escapeHtml(tokenNote)}</p>`;
}

function perTurnTable(perTurn: readonly TurnSummary[], reasoning: boolean): string {
  const n = (v: number | null | undefined, digits = 2): Cell => ({ text: fmtNum(v, digits), className: 'num' });
  const rows: Cell[][] = perTurn.map((t) => [
    String(t.turn),
    t.completed,
    t.failed > 0 ? { text: String(t.failed), className: 'num bad' } : 0,
    n(t.ttft_ms?.p50),
    n(t.ttft_ms?.p90),
    { text: p99Text(t.ttft_ms), className: 'num' },
    ...(reasoning ? [n(t.ttft_content_ms?.p50)] : []),
    n(t.tpot_ms?.p50),
    n(t.e2el_ms?.p50),
    n(t.input_num_tokens?.mean, 1),
    n(t.cached_tokens?.mean, 1),
    n(t.expected_cached_tokens?.mean, 1),
    { text: fmtPercent(t.cache_hit_ratio), className: 'num' },
  ]);
  const head = ['turn', 'completed', 'failed', 'TTFT p50', 'TTFT p90', 'TTFT p99', ...(reasoning ? ['answer p50'] : []), 'TPOT p50', 'E2EL p50', 'input mean'];
  return htmlTable([...head, 'cached mean', 'expected mean', 'hit ratio'], rows);
}

function clientHealthHtml(h: ClientHealth | null): string {
  if (h === null) return '<p class="muted">Not recorded (results.json is missing or has no client health).</p>';
  const d = h.event_loop_delay_ms;
  const verdict = h.bottleneck
    ? '<div class="banner bad"><strong>The client may have been the bottleneck.</strong> Latencies include its own delay.</div>'
    : '<p>The client kept up: event-loop delay and CPU stayed under their thresholds (p99 delay 20 ms, CPU 90% of one core), so it delayed no request; a lag against the schedule, if any, came from the server\'s answers.</p>';
  const rows: Cell[][] = [
    ['event-loop delay p50 / p99 (ms)', `${fmtNum(d.p50)} / ${fmtNum(d.p99)}`],
    ['event-loop delay mean / max (ms)', `${fmtNum(d.mean)} / ${fmtNum(d.max)}`],
    ['CPU (% of one core)', fmtNum(h.cpu_percent_of_one_core, 1)],
    ['CPU user / system (ms)', `${fmtNum(h.cpu_user_ms, 0)} / ${fmtNum(h.cpu_system_ms, 0)}`],
    ['wall time (ms)', fmtNum(h.wall_ms, 0)],
    ['peak RSS (MB)', fmtNum(h.max_rss_mb, 1)],
  ];
  const warnings = h.warnings.length === 0 ? '' : `<ul>${h.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>`;
  return verdict + warnings + htmlTable(['measure', 'value'], rows);
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}

function errorsHtml(s: Summary, records: readonly RequestRecord[], hasRecords: boolean, sample: RecordSample | null): string {
  if (s.failed === 0) return '<p>No failed requests.</p>';
  const byKind = ERROR_KINDS.filter((k) => (s.failed_by_kind?.[k] ?? 0) > 0).map((k): Cell[] => [k, s.failed_by_kind[k]]);
  let html = `<h3>By kind</h3>${htmlTable(['error kind', 'failed'], byKind)}`;
  if (!hasRecords) return html;
  if (sample !== null) {
    html +=
      `<p class="note">The counts by kind above cover every record. The tables below are from ${escapeHtml(sampleText(sample))}: ` +
      'their counts are of the sample, and a rare message may be missing; requests.jsonl (or the CSV) has them all.</p>';
  }
  const failed = records.filter((r) => r.status === 'error' && !r.warmup);
  const groups = new Map<string, { kind: string; status: number | null; message: string; count: number; first: RequestRecord }>();
  for (const r of failed) {
    const kind = r.error_kind ?? 'other';
    const message = r.error ?? '';
    const key = `${kind}\u0000${r.http_status ?? ''}\u0000${errorShape(message)}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { kind, status: r.http_status, message, count: 1, first: r });
    else {
      group.count++;
      if (group.message !== message) group.message = errorShape(message); // only its numbers differ: shown as #
    }
  }
  const groupRows = [...groups.values()]
    .sort((a, b) => b.count - a.count)
    .slice(0, MAX_ERROR_GROUPS)
    .map((g): Cell[] => [
      g.kind,
      g.status ?? '-',
      g.count,
      { text: clip(g.message), className: 'msg' },
      `${g.first.conversation_id} turn ${g.first.turn} at ${fmtNum(g.first.done_at_ms / 1000, 2)} s`,
    ]);
  html += `<h3>By message</h3>${htmlTable(['error kind', 'HTTP status', 'count', 'message', 'first seen'], groupRows)}`;
  if (groups.size > MAX_ERROR_GROUPS) html += `<p class="note">${groups.size - MAX_ERROR_GROUPS} more distinct messages not shown.</p>`;
  const rows = failed
    .slice(0, MAX_ERROR_ROWS)
    .map((r): Cell[] => [
      { text: fmtNum(r.done_at_ms / 1000, 3), className: 'num' },
      r.conversation_id,
      r.turn,
      r.client_id,
      r.error_kind ?? 'other',
      r.http_status ?? '-',
      r.retries,
      { text: clip(r.error ?? ''), className: 'msg' },
    ]);
  html += `<h3>Failed requests</h3>${htmlTable(['end (s)', 'conversation', 'turn', 'client', 'kind', 'HTTP', 'retries', 'message'], rows)}`;
  if (failed.length > MAX_ERROR_ROWS) {
    const of = sample === null ? `${failed.length} failed requests` : `${failed.length} failed requests in the sample`;
    html += `<p class="note">First ${MAX_ERROR_ROWS} of ${of}; all are in requests.jsonl.</p>`;
  }
  return html;
}

/** A config or fact value as text: strings as they are, anything else as JSON. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '-';
  return JSON.stringify(value, null, 1)?.replace(/\n\s*/g, ' ') ?? String(value);
}

function configHtml(data: RunData): string {
  const kv = (obj: Record<string, unknown>): Cell[][] =>
    Object.entries(obj)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]): Cell[] => [k, { html: `<pre class="value">${escapeHtml(valueText(v))}</pre>` }]);
  const facts = { ...data.facts };
  const environment = facts.environment;
  delete facts.environment;
  let html = '';
  if (Object.keys(facts).length > 0) html += `<h3>Run</h3>${htmlTable(['', 'value'], kv(facts), { className: 'kv' })}`;
  if (typeof environment === 'object' && environment !== null) {
    html += `<h3>Environment</h3>${htmlTable(['', 'value'], kv({ ...environment }), { className: 'kv' })}`;
  }
  html += Object.keys(data.config).length > 0 ? optionsTable(data.config, data.defaulted) : '<p class="muted">No configuration recorded (results.json is missing).</p>';
  return html;
}

/**
 * The run's options as the user gave them (issue #34): each by its flag with its value as the flag means it (optionRow:
 * `--no-stream: not set` for a streamed run), the ones given first, then the defaults (when results.json says which).
 */
function optionsTable(config: Record<string, unknown>, defaulted: readonly string[] | null): string {
  const entries = Object.entries(config).filter(([, v]) => v !== undefined);
  const row = ([key, value]: [string, unknown], source?: string): Cell[] => {
    const { option, value: text } = optionRow(key, value);
    return [option, { html: `<pre class="value">${escapeHtml(text)}</pre>` }, ...(source === undefined ? [] : [source])];
  };
  const note = '<p class="note">Secrets are redacted. A switch reads <code>set</code> when the run did what giving its flag does.</p>';
  if (defaulted === null) return `<h3>Options</h3>${htmlTable(['option', 'value'], entries.map((e) => row(e)), { className: 'kv' })}${note}`;
  const isDefault = new Set(defaulted);
  const given = entries.filter(([k]) => !isDefault.has(k)).map((e) => row(e, 'given'));
  const defaults = entries.filter(([k]) => isDefault.has(k)).map((e) => row(e, 'default'));
  return `<h3>Options</h3>${htmlTable(['option', 'value', ''], [...given, ...defaults], { className: 'kv' })}${note}`;
}
