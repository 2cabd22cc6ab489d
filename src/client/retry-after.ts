/**
 * Parses an HTTP `Retry-After` header (delta-seconds or an HTTP-date) into milliseconds from `nowEpochMs`.
 * Returns undefined when the header is absent or unparseable; a date in the past gives 0.
 */
export function parseRetryAfterMs(value: string | string[] | undefined, nowEpochMs: number = Date.now()): number | undefined {
  const header = Array.isArray(value) ? value[0] : value;
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (trimmed.length === 0) return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // An HTTP-date names its weekday and month; without letters, Date.parse would take '-3' as a year.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const atMs = Date.parse(trimmed);
  if (Number.isNaN(atMs)) return undefined;
  return Math.max(0, atMs - nowEpochMs);
}
