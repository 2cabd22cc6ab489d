import * as z from 'zod';

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

/** A --start-at time as text, validated and parsed into epoch milliseconds. */
export const startAtSchema = z.string().transform((text, ctx): number => {
  const ms = parseStartAt(text);
  if (ms !== undefined) return ms;
  ctx.addIssue({ code: 'custom', message: 'expected an ISO 8601 time (2026-12-01T10:00:00Z) or epoch seconds/milliseconds' });
  return z.NEVER;
});
