import { stripVTControlCharacters } from 'node:util';
import stringWidth from 'string-width';

/*
 * Cells of printable ASCII (nearly all) are measured by their length; the rest by string-width's terminal column
 * count (version 4, the one cli-table3 used: version 7 builds an Intl.Segmenter and a Unicode-property regex as it
 * loads, ~15 ms bundled).
 */

/** Printable ASCII only: one terminal column per character. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The terminal columns `text` takes (one line). */
export function displayWidth(text: string): number {
  // ANSI escape sequences (colours, bold) take no columns.
  const plain = text.includes('\x1b') ? stripVTControlCharacters(text) : text;
  return PRINTABLE_ASCII.test(plain) ? plain.length : stringWidth(plain);
}
