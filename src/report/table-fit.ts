import { stripVTControlCharacters } from 'node:util';
import { displayWidth } from './text-width.js';

/*
 * Fitting terminal text to a width (issue #34, "the terminal fits"): a table drops its least important columns, in
 * the order its caller states, then abbreviates its first (label) column with '…'; a text line breaks at its ' | '
 * separators (else at ', ' or a space) onto indented continuation lines. Nothing is left for the terminal to wrap.
 */

/** How a table may shrink: the columns it may drop, least important first (indexes into the header). */
export interface TableFit {
  /** The terminal's width in columns. */
  width: number;
  /** Column indexes in the order they are dropped; columns not listed always stay. */
  dropOrder?: readonly number[];
}

/** How narrow a label column is abbreviated before columns beyond the least important are dropped for it. */
const LABEL_SOFT_WIDTH = 14;
/** The narrowest a label column is abbreviated to. */
const MIN_LABEL_WIDTH = 6;

/** A box table's width: each column's cells plus a space each side, and a border left of each and at the end. */
export function tableWidth(widths: readonly number[]): number {
  return widths.reduce((sum, w) => sum + w + 3, 1);
}

/**
 * The columns kept (indexes, in order) so the table fits `fit.width`, dropping by `fit.dropOrder`. The first column
 * (the labels) counts at most LABEL_SOFT_WIDTH wide: labels are abbreviated before another column goes.
 */
export function keptColumns(widths: readonly number[], fit: TableFit): number[] {
  const kept = new Set(widths.map((_, c) => c));
  const counted = widths.map((w, c) => (c === 0 ? Math.min(w, LABEL_SOFT_WIDTH) : w));
  for (const c of fit.dropOrder ?? []) {
    if (tableWidth([...kept].map((k) => counted[k]!)) <= fit.width) break;
    if (kept.size > 1) kept.delete(c);
  }
  return [...kept];
}

/** `text` cut to `width` terminal columns, ending in '…' when cut (ANSI codes dropped then). */
export function cutText(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  const plain = stripVTControlCharacters(text);
  let out = '';
  for (const char of plain) {
    if (displayWidth(out + char) > width - 1) break;
    out += char;
  }
  return `${out}…`;
}

/** The width the first column may keep so that columns of `widths` fit `width` (at least MIN_LABEL_WIDTH). */
export function labelWidth(widths: readonly number[], width: number): number {
  const excess = tableWidth(widths) - width;
  return excess <= 0 ? widths[0]! : Math.max(MIN_LABEL_WIDTH, Math.min(widths[0]!, widths[0]! - excess));
}

/** The separators a long line breaks at, best first. */
const BREAKS = [' | ', ', ', ' '];

/**
 * `line` as lines of at most `width` columns: broken at the last ' | ' that fits (else ', ', else a space; the
 * separator's spaces dropped), continuation lines indented by `indent` spaces; a piece with no break is cut with '…'.
 */
export function wrapLine(line: string, width: number, indent: number): string[] {
  const out: string[] = [];
  let rest = line;
  const pad = ' '.repeat(Math.min(indent, Math.max(0, width - 10)));
  while (displayWidth(rest) > width) {
    const at = breakPoint(rest, width);
    if (at === null) break;
    out.push(rest.slice(0, at.end).trimEnd());
    rest = pad + rest.slice(at.next).trimStart();
  }
  out.push(cutText(rest, width));
  return out;
}

/** Where `text` breaks to fit `width`: the end of the kept part and the start of the rest, or null with no break. */
function breakPoint(text: string, width: number): { end: number; next: number } | null {
  const start = text.length - text.trimStart().length;
  for (const separator of BREAKS) {
    let best: { end: number; next: number } | null = null;
    for (let i = text.indexOf(separator, start + 1); i !== -1; i = text.indexOf(separator, i + 1)) {
      const end = separator === ', ' ? i + 1 : i;
      if (displayWidth(text.slice(0, end)) > width) break;
      best = { end, next: i + separator.length };
    }
    if (best !== null) return best;
  }
  return null;
}

/** Every line of `text` fitted to `width` (tables are fitted by textTable; this wraps the prose lines). */
export function wrapText(text: string, width: number | undefined, indentOf: (line: string) => number = leadingIndent): string {
  if (width === undefined) return text;
  return text
    .split('\n')
    .flatMap((line) => (displayWidth(line) <= width ? [line] : wrapLine(line, width, indentOf(line))))
    .join('\n');
}

/** A continuation line's indent: the line's own leading spaces plus two. */
function leadingIndent(line: string): number {
  return line.length - line.trimStart().length + 2;
}
