import { z } from 'zod';

/** One `--header` line: an HTTP token as the name, a colon, then the value. */
const HEADER_LINE = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+:\s*.*$/;

/** Repeatable `--header 'Name: value'` lines, validated and parsed into a header object (later lines win). */
export const headersSchema = z.array(z.string().regex(HEADER_LINE, 'expected "Name: value"')).transform((lines): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
});
