import * as z from 'zod';
import { MAX_SECONDS } from '../define.js';

/** --start-at as epoch ms: an ISO 8601 time, or epoch seconds (below 1e11) or milliseconds. Undefined when unreadable. */
export function parseStartAt(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    const n = Number(trimmed);
    return n < 1e11 ? n * 1000 : n;
  }
  const ms = Date.parse(trimmed);
  return Number.isFinite(ms) && /^\d{4}-\d{2}-\d{2}T/.test(trimmed) ? ms : undefined;
}

/** The last time a Date holds (ECMAScript: 8.64e15 ms after the epoch). */
const MAX_DATE_MS = 8.64e15;

/** A --start-at time as text, validated and parsed into epoch milliseconds. */
export const startAtSchema = z.string().transform((text, ctx): number => {
  const ms = parseStartAt(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: 'expected an ISO 8601 time (2026-12-01T10:00:00Z) or epoch seconds/milliseconds' });
    return z.NEVER;
  }
  // A start past a year away is a slip (ms read as s, a wrong year): refused, as every wait past a year is.
  if (ms - Date.now() > MAX_SECONDS * 1000) {
    ctx.addIssue({ code: 'custom', message: `expected a time within a year from now, got ${JSON.stringify(text)}${ms <= MAX_DATE_MS ? ` (${new Date(ms).toISOString()})` : ''}` });
    return z.NEVER;
  }
  return ms;
});
