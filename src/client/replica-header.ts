import type { IncomingHttpHeaders } from 'node:http';
import { escapeControl } from '../util/control-chars.js';

/**
 * The longest replica name kept, in characters (before escaping): a pod name, an ip:port or a worker id fits; a
 * hostile header (10 KB, escape sequences) is cut to this and its control characters shown as `\xNN`.
 */
export const MAX_REPLICA_CHARS = 128;

/**
 * Which replica served a response, from the first of `names` (lower-case header names, tried in order) it carries: its
 * value trimmed, cut to MAX_REPLICA_CHARS and escaped (escapeControl, line breaks and tabs too), so that it is safe in
 * a terminal and a file. Undefined when none is present or the value is empty. Server data: never trusted further.
 */
export function replicaOf(headers: IncomingHttpHeaders, names: readonly string[]): string | undefined {
  for (const name of names) {
    const raw = headers[name];
    const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (value === undefined || value === '') continue;
    return replicaName(value);
  }
  return undefined;
}

/** A replica's name as the server gave it, cut to MAX_REPLICA_CHARS and escaped (line breaks and tabs too). */
export function replicaName(value: string): string {
  return escapeControl(value.slice(0, MAX_REPLICA_CHARS)).replace(/[\t\n]/g, (c) => (c === '\t' ? '\\x09' : '\\x0a'));
}
