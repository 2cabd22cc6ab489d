import { fmtPercent } from './html-util.js';
import type { LivePercentiles, LiveSnapshot } from './live-model.js';
import { counted } from '../util/plural.js';
import { cutText } from './table-fit.js';

/** Widest progress bar (characters); narrower terminals get a shorter one. */
const MAX_BAR = 30;

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

function ms(value: number | null): string {
  if (value === null) return '-';
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

function pair(name: string, p: LivePercentiles | null): string {
  return p === null ? `${name} -` : `${name} p50 ${ms(p.p50)} p99 ${ms(p.p99)} ms`;
}

/** Progress through the run as a fraction in [0, 1] and its counter text, or null when no total is known. */
function progressOf(s: LiveSnapshot): { fraction: number; text: string; etaMs: number | null } | null {
  if (s.durationMs !== undefined && s.durationMs > 0) {
    const fraction = Math.min(1, s.elapsedMs / s.durationMs);
    return { fraction, text: `${seconds(s.elapsedMs)}/${seconds(s.durationMs)}`, etaMs: Math.max(0, s.durationMs - s.elapsedMs) };
  }
  if (s.totalRequests !== undefined && s.totalRequests > 0) {
    const fraction = Math.min(1, s.done / s.totalRequests);
    const etaMs = s.done > 0 && fraction < 1 ? (s.elapsedMs * (s.totalRequests - s.done)) / s.done : fraction >= 1 ? 0 : null;
    return { fraction, text: `${s.done}/${s.totalRequests} requests`, etaMs };
  }
  return null;
}

function bar(fraction: number, width: number): string {
  const full = Math.round(fraction * width);
  return `${'█'.repeat(full)}${'░'.repeat(width - full)}`;
}

function errorsText(s: LiveSnapshot): string {
  const total = s.errors.reduce((n, [, c]) => n + c, 0);
  if (total === 0) return 'errors 0';
  return `errors ${total}: ${s.errors.map(([k, c]) => `${k} ${c}`).join(', ')}`;
}


/**
 * The live panel's lines for a terminal `columns` wide: every line fits in columns - 1 (a line that fills the last
 * column makes some terminals wrap), so redrawing in place never leaves fragments behind.
 */
export function panelLines(s: LiveSnapshot, columns: number): string[] {
  const width = Math.max(10, columns - 1);
  const progress = progressOf(s);
  const eta = progress?.etaMs === null || progress === null ? '' : ` · ETA ${seconds(progress.etaMs)}`;
  const lines: string[] = [];
  if (s.heading !== undefined) lines.push(s.heading);
  lines.push(`chatload · ${s.phase} · ${seconds(s.elapsedMs)} elapsed${eta}`);
  if (progress !== null) {
    const label = ` ${progress.text} ${(progress.fraction * 100).toFixed(0)}%`;
    const barWidth = Math.max(0, Math.min(MAX_BAR, width - label.length - 2));
    lines.push(barWidth >= 5 ? `[${bar(progress.fraction, barWidth)}]${label}` : label.trim());
  } else {
    lines.push(counted(s.done, 'request'));
  }
  const queued = s.queued === null ? '' : ` · queued ${s.queued}`;
  lines.push(`in flight ${s.inFlight ?? '-'}${queued} · ${s.requestRate.toFixed(1)} req/s · ${s.outputTokenRate.toFixed(0)} tok/s (last 10 s)`);
  lines.push(`${pair('TTFT', s.ttft)} · ${pair('TPOT', s.tpot)}`);
  lines.push(`cache hit ${fmtPercent(s.cacheActual)} (expected ${fmtPercent(s.cacheExpected)}) · ${errorsText(s)}`);
  lines.push(`client: loop delay ${s.loopDelayMs === null ? '-' : `${s.loopDelayMs.toFixed(1)} ms`} · CPU ${s.cpuPercent === null ? '-' : `${s.cpuPercent.toFixed(0)}%`}`);
  // Cut by terminal columns (a server's text in the waiting line may hold wide characters), so no line ever wraps.
  return lines.map((line) => cutText(line, width));
}

/** One line of the same figures for logs (--progress plain, or stderr not a TTY), printed every 10 s. */
export function plainLine(s: LiveSnapshot): string {
  const progress = progressOf(s);
  const where = progress === null ? counted(s.done, 'request') : `${progress.text} (${(progress.fraction * 100).toFixed(0)}%)`;
  const eta = progress?.etaMs === null || progress === null ? '' : `, ETA ${seconds(progress.etaMs)}`;
  const head = s.heading === undefined ? '' : `${s.heading} | `;
  return (
    `chatload: ${head}${s.phase} ${seconds(s.elapsedMs)}${eta} | ${where} | in flight ${s.inFlight ?? '-'} | ` +
    `${s.requestRate.toFixed(1)} req/s, ${s.outputTokenRate.toFixed(0)} tok/s | ${pair('TTFT', s.ttft)} | ${pair('TPOT', s.tpot)} | ` +
    `cache ${fmtPercent(s.cacheActual)}/${fmtPercent(s.cacheExpected)} | ${errorsText(s)}`
  );
}

/** The line shown while waiting for the server: the URL, the seconds --ready-timeout-sec leaves, and the last failure's cause. */
export function waitingLine(url: string, remainingMs: number, lastCause?: string): string {
  return `chatload: waiting for ${url} to answer: ${seconds(remainingMs)} left (--ready-timeout-sec)${lastCause === undefined ? '' : `; last: ${lastCause}`}`;
}
