/** Small helpers for building the HTML reports as strings: escaping, number formatting, tables, the page shell. */
import { percentileSupported } from '../metrics/percentile-support.js';
import type { Stats } from '../metrics/stats.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values (& < > " '). Non-strings are stringified first. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A number for display: '-' for null/undefined/NaN; integers as they are; others with `digits` decimals (default 2). */
export function fmtNum(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  return Number.isInteger(value) ? String(value) : value.toFixed(digits);
}

/** Percentile p of `stats` for display: '-' when absent or when its count does not support p (p99 needs 100 values). */
export function fmtPercentileOf(stats: Stats | null | undefined, p: 50 | 90 | 99, digits = 2): string {
  if (stats === null || stats === undefined || !percentileSupported(p, stats.count)) return '-';
  return fmtNum(p === 50 ? stats.p50 : p === 90 ? stats.p90 : stats.p99, digits);
}

/** A ratio in [0, 1] as a percentage with one decimal, '-' when null. */
export function fmtPercent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return '-';
  return `${(ratio * 100).toFixed(1)}%`;
}

/** A table cell: text (escaped) or pre-built HTML. */
export type Cell = string | number | null | undefined | { html: string } | { text: string; className: string };

function cellHtml(cell: Cell, tag: 'td' | 'th', numeric: boolean): string {
  if (cell !== null && typeof cell === 'object') {
    if ('html' in cell) return `<${tag}>${cell.html}</${tag}>`;
    return `<${tag} class="${escapeHtml(cell.className)}">${escapeHtml(cell.text)}</${tag}>`;
  }
  const text = cell === null || cell === undefined ? '-' : typeof cell === 'number' ? fmtNum(cell) : cell;
  return `<${tag}${numeric ? ' class="num"' : ''}>${escapeHtml(text)}</${tag}>`;
}

/** An HTML table; every text cell is escaped. Number cells (and string cells of columns listed in `numeric`) align right. */
export function htmlTable(head: readonly string[], rows: ReadonlyArray<readonly Cell[]>, options: { className?: string } = {}): string {
  const headHtml = head.map((h, i) => cellHtml(h, 'th', i > 0 && rows.some((r) => typeof r[i] === 'number'))).join('');
  const body = rows
    .map((row) => `<tr>${row.map((c, i) => cellHtml(c, i === 0 ? 'th' : 'td', typeof c === 'number')).join('')}</tr>`)
    .join('\n');
  const cls = options.className === undefined ? '' : ` class="${escapeHtml(options.className)}"`;
  return `<div class="table-wrap"><table${cls}><thead><tr>${headHtml}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

/** A chart in its figure: `id` names it (data-chart), `svg` is the rendered chart, `note` an optional caption line. */
export function chartFigure(id: string, title: string, svg: string, note?: string): string {
  const noteHtml = note === undefined ? '' : `<p class="note">${escapeHtml(note)}</p>`;
  return `<figure class="chart" data-chart="${escapeHtml(id)}"><figcaption>${escapeHtml(title)}</figcaption>${svg}${noteHtml}</figure>`;
}

/** A section of a report page: its anchor, heading, nav label (default: the heading) and HTML. */
export interface PageSection {
  id: string;
  title: string;
  nav?: string;
  html: string;
}

/** The sections as the page's body and nav: adding a section to a page is adding one PageSection to its list. */
export function pageSections(sections: readonly PageSection[]): { nav: Array<[string, string]>; body: string } {
  return {
    nav: sections.map((s) => [s.id, s.nav ?? s.title]),
    body: sections.map((s) => `<section id="${escapeHtml(s.id)}"><h2>${escapeHtml(s.title)}</h2>\n${s.html}\n</section>`).join('\n'),
  };
}

/**
 * The Content-Security-Policy of every report: nothing may load from anywhere and no script may run; only inline
 * styles and data: images are allowed. A defence in depth behind the escaping.
 */
export const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const CSS = `
:root { --fg: #1d2330; --muted: #5d6675; --line: #dde1e8; --bg: #f6f7f9; --card: #fff; --bad: #b42318; --warn: #8a5a00; --warnbg: #fff6dd; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { background: #1d2330; color: #fff; padding: 18px 28px 14px; }
header h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; overflow-wrap: break-word; }
header .sub { margin: 0; color: #c9cfda; font-size: 13px; overflow-wrap: anywhere; }
nav { padding: 8px 28px; background: #fff; border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 1; }
nav a { color: #2b59c3; text-decoration: none; margin-right: 16px; font-size: 13px; }
main { padding: 8px 28px 40px; max-width: 1500px; }
section { margin-top: 26px; }
h2 { font-size: 18px; margin: 0 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 8px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 14px; }
.card { flex: 1 0 auto; min-width: 150px; max-width: 100%; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; }
.card .k { color: var(--muted); font-size: 12px; white-space: nowrap; }
.card .v { font-size: 19px; font-weight: 600; font-variant-numeric: tabular-nums; white-space: nowrap; }
.card.bad .v { color: var(--bad); }
.card.wide .v { font-size: 15px; font-weight: 500; white-space: normal; }
.cmd { margin: 14px 0 0; background: #1d2330; color: #e6e9ef; border-radius: 6px; padding: 8px 12px; overflow-x: auto; }
.cmd code { font: 12.5px/1.5 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; overflow-wrap: anywhere; }
.charts.full { grid-template-columns: 1fr; }
table.kv th:first-child { width: 28%; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(520px, 100%), 1fr)); gap: 14px; }
figure.chart { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; min-width: 0; overflow-x: auto; }
figure.chart figcaption { font-weight: 600; margin-bottom: 4px; }
figure.chart svg { max-width: 100%; height: auto; }
.note { color: var(--muted); font-size: 12px; margin: 4px 0 0; }
.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; font-size: 13px; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: #eef1f5; position: sticky; top: 0; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.msg { overflow-wrap: anywhere; min-width: 24ch; max-width: 60ch; }
td.bad, strong.bad { color: var(--bad); font-weight: 600; }
td.good { color: #067647; font-weight: 600; }
tbody tr:hover { background: #f3f6fb; }
.banner { border-radius: 6px; padding: 10px 14px; margin: 14px 0 0; border: 1px solid #e8c66a; background: var(--warnbg); color: var(--warn); }
.banner.bad { border-color: #f1a7a0; background: #fdecea; color: var(--bad); }
.banner ul { margin: 4px 0 0; padding-left: 20px; }
.muted { color: var(--muted); }
pre.value { margin: 0; min-width: 16ch; white-space: pre-wrap; overflow-wrap: anywhere; font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
footer { color: var(--muted); font-size: 12px; padding: 0 28px 24px; }
@media (max-width: 600px) {
  header { padding: 14px 12px 10px; }
  nav { padding: 8px 12px; white-space: nowrap; overflow-x: auto; }
  main { padding: 8px 12px 32px; }
  footer { padding: 0 12px 20px; }
  figure.chart { padding: 8px; }
  figure.chart figure { margin: 0; }
}
`;

/** A complete, self-contained HTML page: inline CSS, a CSP that forbids every fetch and script, no external resource. */
export function htmlPage(input: { title: string; subtitle: string; nav: ReadonlyArray<[string, string]>; body: string; footer: string }): string {
  const nav = input.nav.map(([id, label]) => `<a href="#${escapeHtml(id)}">${escapeHtml(label)}</a>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(input.title)}</title>
<style>${CSS}</style>
</head>
<body>
<header><h1>${escapeHtml(input.title)}</h1><p class="sub">${escapeHtml(input.subtitle)}</p></header>
<nav>${nav}</nav>
<main>
${input.body}
</main>
<footer>${escapeHtml(input.footer)}</footer>
</body>
</html>
`;
}
