import { ConfigError } from '../errors/index.js';

/** Parses repeatable `--header 'Name: value'` flags into a header object. */
export function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new ConfigError(`--header: expected "Name: value", got ${JSON.stringify(line.split(':')[0])}`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}
