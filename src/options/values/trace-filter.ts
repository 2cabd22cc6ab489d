import * as z from 'zod';

/**
 * `--trace-filter model=ChatGPT,log=Conversation log,failed=keep`: which rows of a CSV trace (Azure, BurstGPT) are
 * replayed. Comma-separated KEY=VALUE pairs; a value may list alternatives with `|` (`model=ChatGPT|GPT-4`). Keys:
 * `model` and `log` (BurstGPT's Model and Log Type columns, matched case-insensitively), `failed` (skip, the default:
 * rows with zero output tokens are left out and counted; keep: replayed at max_tokens 1; only: nothing else).
 */
export interface TraceFilter {
  /** Accepted Model values, lower-cased; undefined: any. */
  models?: string[];
  /** Accepted Log Type values, lower-cased; undefined: any. */
  logTypes?: string[];
  /** What happens to failed requests (zero output tokens). */
  failed: 'skip' | 'keep' | 'only';
}

/** The keys of --trace-filter. */
export const TRACE_FILTER_KEYS = ['model', 'log', 'failed'] as const;

/** Parses the text of --trace-filter; a string is the one-line problem. */
export function parseTraceFilter(text: string): TraceFilter | string {
  const filter: TraceFilter = { failed: 'skip' };
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) return `expected KEY=VALUE pairs separated by commas (keys: ${TRACE_FILTER_KEYS.join(', ')}), got ${JSON.stringify(pair)}`;
    const key = pair.slice(0, eq).trim().toLowerCase();
    const values = pair.slice(eq + 1).split('|').map((v) => v.trim().toLowerCase());
    if (values.some((v) => v === '')) return `${key}: expected a value (alternatives separated by |), got ${JSON.stringify(pair.slice(eq + 1))}`;
    if (key === 'model') filter.models = [...(filter.models ?? []), ...values];
    else if (key === 'log') filter.logTypes = [...(filter.logTypes ?? []), ...values];
    else if (key === 'failed') {
      const v = values[0]!;
      if (values.length !== 1 || (v !== 'skip' && v !== 'keep' && v !== 'only')) return `failed: expected skip, keep or only, got ${JSON.stringify(pair.slice(eq + 1))}`;
      filter.failed = v;
    } else return `unknown key ${JSON.stringify(key)}: expected one of ${TRACE_FILTER_KEYS.join(', ')}`;
  }
  return filter;
}

/** --trace-filter as text, validated and parsed. */
export const traceFilterSchema = z.string().transform((text, ctx): TraceFilter => {
  const parsed = parseTraceFilter(text);
  if (typeof parsed === 'string') {
    ctx.addIssue({ code: 'custom', message: parsed });
    return z.NEVER;
  }
  return parsed;
});
