import * as z from 'zod';

/**
 * One `--header` line: an HTTP token as the name, then `:` or `=` (the newest reference accepts both), then the
 * value. The first `:` or `=` splits, so a value may hold either (`Authorization: Bearer abc==`).
 */
const HEADER_LINE = /^\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+\s*[:=].*$/;

/** Repeatable `--header 'Name: value'` / `'Name=value'` lines, validated and parsed into a header object (later lines win). */
export const headersSchema = z
  .array(z.string().regex(HEADER_LINE, 'expected "Name: value" or "Name=value"'))
  .transform((lines): Record<string, string> => {
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const split = line.search(/[:=]/);
      headers[line.slice(0, split).trim()] = line.slice(split + 1).trim();
    }
    return headers;
  });
