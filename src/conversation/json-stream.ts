import { DatasetError } from '../errors/index.js';
import { utf8Chunks, type Utf8ReadOptions } from '../util/utf8-text.js';

/** One element of a top-level JSON list: its raw text and the 1-based line it starts on. */
export interface JsonListElement {
  text: string;
  line: number;
}

/**
 * Streams the elements of a file holding one JSON list (`[ {...}, {...} ]`) without reading the whole file into
 * one string: a small scanner tracks strings, escapes and bracket depth, and yields each top-level element's text
 * for JSON.parse. Memory is one element at a time plus a read buffer, so a multi-gigabyte list loads as a stream.
 * Structural problems (not a list, unbalanced brackets, text after the list) are one-line DatasetErrors with the line.
 * The text is read as utf8Chunks reads it (BOM dropped, invalid UTF-8 refused unless allowed), and an element longer
 * than `maxElementChars` is refused, so memory stays bounded.
 */
export async function* streamJsonList(
  file: string,
  options: Utf8ReadOptions & { chunkBytes?: number; maxElementChars?: number } = {},
): AsyncGenerator<JsonListElement> {
  const input = utf8Chunks(file, options, options.chunkBytes ?? 1 << 20);
  const maxElementChars = options.maxElementChars ?? Number.POSITIVE_INFINITY;
  const list = new ListSyntax(file);
  let line = 1;
  let inString = false;
  let escaped = false;
  /** Inside an element: its text from earlier chunks, the line it starts on, and its open brackets. */
  let inElement = false;
  let pending = '';
  let elementLine = 0;
  const closers: number[] = [];
  for await (const chunk of input) {
    let from = inElement ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (inString) {
        if (c === 10) line += 1;
        if (escaped) escaped = false;
        else if (c === 92 /* \ */) escaped = true;
        else if (c === 34 /* " */) inString = false;
        continue;
      }
      const space = c === 32 || c === 9 || c === 10 || c === 13 || c === 0xfeff;
      if (inElement && closers.length === 0 && (space || c === 44 || c === 93)) {
        // The end of a scalar element (a conversation list should hold objects; JSON.parse says so later).
        yield { text: pending + chunk.slice(from, i), line: elementLine };
        pending = '';
        inElement = false;
        list.expectComma = true;
      }
      if (c === 10) line += 1;
      if (space) continue;
      if (!inElement) {
        if (list.punctuation(c, line)) continue;
        inElement = true;
        from = i;
        elementLine = line;
      }
      if (c === 34) inString = true;
      else if (c === 123 /* { */ || c === 91) closers.push(c === 123 ? 125 : 93);
      else if (c === 125 || c === 93) {
        if (closers.pop() !== c) throw new DatasetError({ file, line }, `invalid JSON: unexpected "${String.fromCharCode(c)}"`);
        if (closers.length === 0) {
          yield { text: pending + chunk.slice(from, i + 1), line: elementLine };
          pending = '';
          inElement = false;
          list.expectComma = true;
        }
      }
    }
    if (inElement) {
      if (pending.length + chunk.length - from > maxElementChars) {
        throw new DatasetError({ file, line: elementLine }, `a list element longer than ${maxElementChars.toLocaleString('en-US')} characters (the bound of one conversation's text)`);
      }
      pending += chunk.slice(from);
    }
  }
  list.end(line, inElement || inString);
}

/**
 * The top-level list's own syntax, outside its elements: the opening "[", a "," between two elements and the closing
 * "]". Inside an element the scanner does not ask: the list was opened and is not closed yet.
 */
class ListSyntax {
  readonly #file: string;
  #started = false;
  #ended = false;
  /** An element has just ended: a "," or the closing "]" comes next. */
  expectComma = false;

  constructor(file: string) {
    this.#file = file;
  }

  /** Reads `c`, a character outside strings, spaces and elements on `line`: true when it is the list's own, false when it opens an element. */
  punctuation(c: number, line: number): boolean {
    const file = this.#file;
    if (this.#ended) throw new DatasetError({ file, line }, 'invalid JSON: unexpected text after the end of the list');
    if (!this.#started) {
      if (c !== 91 /* [ */) throw new DatasetError({ file, line }, 'expected a JSON list of conversations');
      this.#started = true;
      return true;
    }
    if (c === 93 /* ] */) {
      this.#ended = true;
      return true;
    }
    if (c === 44 /* , */) {
      if (!this.expectComma) throw new DatasetError({ file, line }, 'invalid JSON: unexpected ","');
      this.expectComma = false;
      return true;
    }
    if (this.expectComma) throw new DatasetError({ file, line }, 'invalid JSON: expected "," between list elements');
    return false;
  }

  /** At the end of the file (`unfinished` when inside an element or a string): throws unless the list was opened and closed. */
  end(line: number, unfinished: boolean): void {
    if (!this.#started) throw new DatasetError({ file: this.#file }, 'the file is empty; expected a JSON list of conversations');
    if (!this.#ended || unfinished) throw new DatasetError({ file: this.#file, line }, 'invalid JSON: the list is not closed (truncated file?)');
  }
}
