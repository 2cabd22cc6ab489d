import type { GateResult } from './gates.js';
import { fmtNum } from './html-util.js';
import { textTable } from './text-table.js';
import { counted } from '../util/plural.js';

/** The runs a gate table names: the baseline's and the candidate's labels (their folders). */
export interface GateRuns {
  base: string;
  candidate: string;
}

/** A value in its unit: "40.52 ms", "1234.5 tok/s", "85.2%" (a ratio), "12" (requests); '-' when null. */
function valueText(value: number | null, unit: string): string {
  if (value === null) return '-';
  if (unit === 'fraction') return `${(value * 100).toFixed(1)}%`;
  if (unit === 'requests') return fmtNum(value, 0);
  return `${fmtNum(value, 2)} ${unit}`;
}

/** A signed amount in the metric's unit: "+120.68 ms", "-2.1 pt" (a ratio, in percentage points), "+3". */
function amountText(amount: number, unit: string, sign: '+' | '±' | 'signed'): string {
  const s = sign === '±' ? '±' : amount > 0 ? '+' : amount < 0 ? '-' : '';
  const m = Math.abs(amount);
  if (unit === 'fraction') return `${s}${(m * 100).toFixed(1)} pt`;
  if (unit === 'requests') return `${s}${fmtNum(m, 0)}`;
  return `${s}${fmtNum(m, 2)} ${unit}`;
}

/** A fraction as a signed percentage: "+297.8%", "-inf%" from a base of 0. */
function percentText(fraction: number, sign: '±' | 'signed'): string {
  const s = sign === '±' ? '±' : fraction > 0 ? '+' : fraction < 0 ? '-' : '';
  return Number.isFinite(fraction) ? `${s}${Math.abs(fraction * 100).toFixed(1)}%` : `${s}inf%`;
}

/** The cells of one gate: metric, base, candidate, change, noise band, verdict. */
export function gateCells(r: GateResult): { gate: string; base: string; candidate: string; change: string; band: string; verdict: string } {
  const { unit } = r.gate;
  const change = r.change === null || r.relativeChange === null ? '-' : `${amountText(r.change, unit, 'signed')} (${percentText(r.relativeChange, 'signed')})`;
  let band = 'unknown';
  if (r.band !== null) {
    const relative = r.base !== null && r.base !== 0 ? ` (${percentText(r.band / Math.abs(r.base), '±')})` : '';
    band = `${amountText(r.band, unit, '±')}${relative}, ${r.bandSource === 'repeat' ? '--repeat 95% CI' : 'per-request 95%'}`;
  }
  return { gate: r.gate.text, base: valueText(r.base, unit), candidate: valueText(r.candidate, unit), change, band, verdict: verdictText(r) };
}

/** "pass", "pass (within noise)", "FAIL", "FAIL (no value in the candidate)". */
export function verdictText(r: GateResult): string {
  switch (r.verdict) {
    case 'pass':
      return 'pass';
    case 'noise':
      return 'pass (within noise)';
    case 'fail':
      return r.band === null ? 'FAIL (band unknown)' : 'FAIL';
    case 'missing': {
      const which = r.base === null && r.candidate === null ? 'either run' : r.base === null ? 'the baseline' : 'the candidate';
      // A p99 is shown from 100 values up (metrics/percentile-support.ts), as in compare's table.
      return `FAIL (no value in ${which}${r.gate.rowKey.endsWith(' p99') ? ': a p99 needs 100 requests' : ''})`;
    }
  }
}

/** The last line: "chatload compare: 1 of 2 gates failed: median_ttft_ms>+20%" or "…: all 2 gates passed". */
export function gatesVerdictLine(results: readonly GateResult[]): string {
  const failed = results.filter((r) => r.failed);
  if (failed.length === 0) return `chatload compare: all ${counted(results.length, 'gate')} passed`;
  return `chatload compare: ${failed.length} of ${counted(results.length, 'gate')} failed: ${failed.map((r) => r.gate.text).join(', ')}`;
}

const HEAD = ['gate', 'base', 'candidate', 'change', 'noise band', 'verdict'];

/** The gates as a terminal table, one line per gate, then the verdict line. */
export function formatGates(results: readonly GateResult[], runs: GateRuns): string {
  const rows = results.map((r) => Object.values(gateCells(r)));
  const table = textTable(rows, { head: HEAD, align: ['left', 'right', 'right', 'right', 'right', 'left'] });
  return `Gates (--fail-on), ${runs.base} -> ${runs.candidate}:\n${table}\n${gatesVerdictLine(results)}\n`;
}

/** Text for a Markdown table cell: HTML and Markdown's own characters escaped, on one line. */
function mdCell(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\\`*_[\]|~#]/g, '\\$&');
}

/** The gates as a Markdown table, for a CI job summary ($GITHUB_STEP_SUMMARY). */
export function gatesMarkdown(results: readonly GateResult[], runs: GateRuns): string {
  const failed = results.filter((r) => r.failed).length;
  const lines = [
    `### chatload compare: ${failed === 0 ? `all ${counted(results.length, 'gate')} passed` : `${failed} of ${counted(results.length, 'gate')} failed`}`,
    '',
    `Baseline ${mdCell(runs.base)}, candidate ${mdCell(runs.candidate)}. A change inside the noise band never fails a gate.`,
    '',
    `| ${HEAD.join(' | ')} |`,
    '| --- | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const r of results) {
    const c = gateCells(r);
    const verdict = r.failed ? `**${mdCell(c.verdict)}**` : mdCell(c.verdict);
    // A gate's text is a known metric, < or >, and a number with its unit: no backtick or pipe ends its code span.
    lines.push(`| ${[`\`${c.gate}\``, mdCell(c.base), mdCell(c.candidate), mdCell(c.change), mdCell(c.band), verdict].join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Text for XML (an attribute or element content): the five special characters escaped, characters XML 1.0 forbids dropped. */
export function xmlText(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** The gates as JUnit XML: one test suite, one test case per gate, a failed gate's case with its <failure>. */
export function gatesJunit(results: readonly GateResult[], runs: GateRuns): string {
  const failures = results.filter((r) => r.failed).length;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="chatload compare" tests="${results.length}" failures="${failures}" errors="0">`,
    `  <testsuite name="chatload compare --fail-on" tests="${results.length}" failures="${failures}" errors="0" skipped="0">`,
    '    <properties>',
    `      <property name="baseline" value="${xmlText(runs.base)}"/>`,
    `      <property name="candidate" value="${xmlText(runs.candidate)}"/>`,
    '    </properties>',
  ];
  for (const r of results) {
    const c = gateCells(r);
    const detail = `base ${c.base}, candidate ${c.candidate}, change ${c.change}, noise band ${c.band}: ${c.verdict}`;
    lines.push(`    <testcase classname="chatload.compare" name="${xmlText(c.gate)}">`);
    if (r.failed) lines.push(`      <failure type="gate" message="${xmlText(`${c.gate}: ${detail}`)}">${xmlText(detail)}</failure>`);
    else lines.push(`      <system-out>${xmlText(detail)}</system-out>`);
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>');
  return `${lines.join('\n')}\n`;
}
