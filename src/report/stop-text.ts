/**
 * A run's stop reason as a heading says it: `completed` only when no conversation failed (issue #34: a run whose
 * server died mid-run read "(completed)", since every conversation had ended, most of them by failing). results.json
 * keeps `stop_reason` as it is; `conversations.failed` says the rest.
 */
export function stopText(reason: string, conversations: { readonly total?: number; readonly failed?: number } | null | undefined): string {
  const failed = conversations?.failed ?? 0;
  if (reason !== 'completed' || failed === 0) return reason;
  const total = conversations?.total;
  return `ended: ${failed}${total === undefined ? '' : ` of ${total}`} conversation${(total ?? failed) === 1 ? '' : 's'} failed`;
}
