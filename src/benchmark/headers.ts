import { ConfigError } from '../errors/index.js';

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Parses repeatable `--header` flags into a header object. Each is `Name: value` or `Name=value`, as the newest
 * reference accepts both; the first `:` or `=` splits, so a value may hold either (`Authorization: Bearer abc==`).
 * The error never shows the value: it may be a secret.
 */
export function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const split = line.search(/[:=]/);
    const name = split < 0 ? '' : line.slice(0, split).trim();
    if (!HEADER_NAME.test(name)) {
      const shown = split < 0 ? 'no ":" or "="' : `name ${JSON.stringify(name)}`;
      throw new ConfigError(`--header: expected "Name: value" or "Name=value", got ${shown}`);
    }
    headers[name] = line.slice(split + 1).trim();
  }
  return headers;
}
