import type { ErrorKind } from '../client/types.js';

/** Every ErrorKind, in the order summaries list them. */
export const ERROR_KINDS = [
  'connect_refused',
  'connect_reset',
  'dns',
  'http_status',
  'timeout_ttft',
  'timeout_idle',
  'timeout_total',
  'malformed_stream',
  'truncated_stream',
  'empty_answer',
  'aborted',
  'other',
] as const satisfies readonly ErrorKind[];

// Compile-time guard: fails to type-check if ErrorKind gains a member this list lacks.
type MissingKinds = Exclude<ErrorKind, (typeof ERROR_KINDS)[number]>;
const _allKindsListed: [MissingKinds] extends [never] ? true : MissingKinds = true;
void _allKindsListed;

/** A count per error kind, every kind present and zero. */
export function emptyErrorKindCounts(): Record<ErrorKind, number> {
  const counts = {} as Record<ErrorKind, number>;
  for (const kind of ERROR_KINDS) counts[kind] = 0;
  return counts;
}
