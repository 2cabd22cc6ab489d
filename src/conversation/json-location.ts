import { parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { DatasetError } from '../errors/index.js';

// A dataset's JSON parsed with errors that say where (file, line, column), and bounded nesting.

/** 1-based line and column of a character offset in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * JSON.parse with errors that say where. The fast native parser runs first; only on failure does jsonc-parser
 * (strict mode: no comments, no trailing commas) re-scan the text, because V8's messages on Node 20 often carry
 * no position at all.
 */
export function parseJsonWithLocation(text: string, file: string, lineOffset = 0): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // jsonc-parser recurses once a level: thousands of open brackets overflowed the stack (issue #35). Deeper than
    // any dataset nests, the place it passes the limit is the error.
    const tooDeep = nestingPast(text, MAX_NESTING);
    if (tooDeep !== undefined) {
      const { line, column } = lineAndColumn(text, tooDeep);
      throw new DatasetError({ file, line: line + lineOffset, column }, `invalid JSON: nested more than ${MAX_NESTING} levels deep`);
    }
    const errors: ParseError[] = [];
    parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    const offset = first?.offset ?? text.length;
    const { line, column } = lineAndColumn(text, offset);
    const reason = first ? printParseErrorCode(first.error) : (error as Error).message.split('\n')[0];
    throw new DatasetError({ file, line: line + lineOffset, column }, `invalid JSON: ${describeParseError(reason ?? 'syntax error')}`);
  }
}

/** Deepest nesting of a dataset's JSON that is located by jsonc-parser (recursive); past it, the depth is the error. */
export const MAX_NESTING = 1000;

/** The offset where `text`'s brackets open past `limit` levels (strings skipped), or undefined. Iterative. */
export function nestingPast(text: string, limit: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > limit) return i;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return undefined;
}

/** jsonc-parser's codes (e.g. `PropertyNameExpected`) as words. */
function describeParseError(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
