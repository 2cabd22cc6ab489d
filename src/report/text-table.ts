import { cutText, keptColumns, labelWidth, wrapLine, type TableFit } from './table-fit.js';
import { displayWidth } from './text-width.js';

export { displayWidth } from './text-width.js';

/*
 * Box-drawn tables for the terminal: the run's summary, `compare` and `--repeat`. The layout is cli-table3's (its
 * default box characters, one space of padding each side, a rule under the header and none between rows), which
 * these tables were drawn with before. Given a width (`fit`), a table drops columns and abbreviates its labels to fit it.
 *
 * Written here on purpose rather than through cli-table3: at a run's end, cli-table3 with its string-width,
 * emoji-regex and colors modules cost 13-21 ms of CPU for the summary's two small tables, loaded and run cold once
 * (chatload's all-in CPU against the client floor, issue 17). These tables hold one-line cells only, measured
 * by text-width.ts.
 */

/** How a column's cells line up in their width. */
export type ColumnAlign = 'left' | 'right';

export interface TextTableOptions {
  /** The header row; the table has as many columns. */
  head: readonly string[];
  /** Each column's alignment, header included; 'left' where absent. */
  align?: readonly ColumnAlign[];
  /** ANSI colours: header cells cyan, borders grey. Cells may carry their own ANSI colours either way. */
  color?: boolean;
  /**
   * The width to fit (a terminal's columns): columns are dropped by `fit.dropOrder`, then the first column's cells
   * are cut with '…', and a line under the table names the columns dropped. Without it the table takes what it needs.
   */
  fit?: TableFit;
}


const grey = (text: string): string => `\x1b[90m${text}\x1b[39m`;
const cyan = (text: string): string => `\x1b[36m${text}\x1b[39m`;
const plain = (text: string): string => text;

/** The table as text, its lines joined by '\n' (no trailing newline). Rows shorter than the header get empty cells. */
export function textTable(rows: ReadonlyArray<readonly string[]>, options: TextTableOptions): string {
  if (options.fit === undefined) return drawTable(rows, options);
  const fit = options.fit;
  const widths = columnWidths(rows, options.head);
  const kept = keptColumns(widths, fit);
  const pick = <T>(cells: readonly T[]): T[] => kept.map((c) => cells[c]!);
  const label = labelWidth(pick(widths), fit.width);
  const cut = (cells: readonly string[]): string[] => pick(cells).map((cell, i) => (i === 0 ? cutText(cell, label) : cell));
  const table = drawTable(rows.map((row) => cut(options.head.map((_, c) => row[c] ?? ''))), {
    head: cut(options.head),
    align: options.align === undefined ? undefined : pick(options.head.map((_, c) => options.align![c] ?? 'left')),
    color: options.color,
  });
  // Too narrow even so (a terminal of a few columns): each line is cut, never wrapped.
  const lines = table.split('\n').map((line) => cutText(line, fit.width));
  const dropped = options.head.filter((_, c) => !kept.includes(c));
  if (dropped.length > 0) lines.push(...wrapLine(`hidden to fit ${fit.width} columns: ${dropped.join(', ')}`, fit.width, 2));
  return lines.join('\n');
}

/** Each column's width: its widest cell, header included. */
function columnWidths(rows: ReadonlyArray<readonly string[]>, head: readonly string[]): number[] {
  const widths = head.map(displayWidth);
  for (const row of rows) {
    for (let c = 0; c < head.length; c++) widths[c] = Math.max(widths[c]!, displayWidth(row[c] ?? ''));
  }
  return widths;
}

/** The table as it is, every column at its widest cell. */
function drawTable(rows: ReadonlyArray<readonly string[]>, options: TextTableOptions): string {
  const { head } = options;
  const border = options.color === true ? grey : plain;
  const header = options.color === true ? cyan : plain;
  const widths = columnWidths(rows, head);
  // Each column's piece of a rule coloured apart, as cli-table3 drew them: the same bytes as before.
  const rule = (left: string, join: string, right: string): string =>
    widths.map((w, c) => border((c === 0 ? left : join) + '─'.repeat(w + 2) + (c === widths.length - 1 ? right : ''))).join('');
  const line = (cells: readonly string[], style: (text: string) => string): string => {
    let out = '';
    for (let c = 0; c < head.length; c++) {
      const cell = cells[c] ?? '';
      const pad = ' '.repeat(widths[c]! - displayWidth(cell));
      out += border('│') + style(` ${options.align?.[c] === 'right' ? pad + cell : cell + pad} `);
    }
    return out + border('│');
  };
  const lines = [rule('┌', '┬', '┐'), line(head, header)];
  if (rows.length > 0) lines.push(rule('├', '┼', '┤'));
  for (const row of rows) lines.push(line(row, plain));
  lines.push(rule('└', '┴', '┘'));
  return lines.join('\n');
}
