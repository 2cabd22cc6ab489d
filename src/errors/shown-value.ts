/**
 * A value from a file, a request or a flag as an error message names it (issue #35: "got null" for 1e309, which
 * JSON.parse reads as Infinity and JSON.stringify prints as null). Numbers as they are, with a number too large
 * to hold said so; text and structures as JSON, cut at 40 characters; nothing as "nothing".
 */
export function shownValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number') return Number.isFinite(value) || Number.isNaN(value) ? String(value) : `${value < 0 ? '-' : ''}a number too large to hold (read as ${value})`;
  if (typeof value === 'bigint') return `${value}`;
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 40 ? `${json.slice(0, 40)}…` : json;
}
