import { stripVTControlCharacters } from 'node:util';
import stringWidth from 'string-width';

/*
 * Box-drawn tables for the terminal: the run's summary, `compare` and `--repeat`. The layout is cli-table3's (its
 * default box characters, one space of padding each side, a rule under the header and none between rows), which
 * these tables were drawn with before.
 *
 * Written here on purpose rather than through cli-table3: at a run's end, cli-table3 with its string-width,
 * emoji-regex and colors modules cost 13-21 ms of CPU for the summary's two small tables, loaded and run cold once
 * (chatload's all-in CPU against the client floor, issue 17). These tables hold one-line cells only. Cells of
 * printable ASCII (nearly all) are measured by their length; the rest by string-width's terminal column count
 * (version 4, the one cli-table3 used: version 7 builds an Intl.Segmenter and a Unicode-property regex as it loads,
 * ~15 ms bundled).
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
}

/** Printable ASCII only: one terminal column per character. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The terminal columns `text` takes (one line). */
export function displayWidth(text: string): number {
  // ANSI escape sequences (colours, bold) take no columns.
  const plain = text.includes('\x1b') ? stripVTControlCharacters(text) : text;
  return PRINTABLE_ASCII.test(plain) ? plain.length : stringWidth(plain);
}

const grey = (text: string): string => `\x1b[90m${text}\x1b[39m`;
const cyan = (text: string): string => `\x1b[36m${text}\x1b[39m`;
const plain = (text: string): string => text;

/** The table as text, its lines joined by '\n' (no trailing newline). Rows shorter than the header get empty cells. */
export function textTable(rows: ReadonlyArray<readonly string[]>, options: TextTableOptions): string {
  const { head } = options;
  const border = options.color === true ? grey : plain;
  const header = options.color === true ? cyan : plain;
  const widths = head.map(displayWidth);
  for (const row of rows) {
    for (let c = 0; c < head.length; c++) widths[c] = Math.max(widths[c]!, displayWidth(row[c] ?? ''));
  }
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
