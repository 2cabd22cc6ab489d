import type { ReplicaRow, RoutingLoss } from '../metrics/replica-tally.js';
import { escapeHtml, fmtPercent, htmlTable } from './html-util.js';
import { counted } from '../util/plural.js';

/**
 * The report's "Replicas" section (issue #31): the share of the one ideal cache's hits the router's choices lost, the
 * sessions it scattered, and one row per replica. Empty when results.json names no replica. Every cell is escaped
 * (replica names are server data).
 */
export function replicasHtml(rows: readonly ReplicaRow[] | null, routing: RoutingLoss | null): string {
  // One replica (the embedded simulator names its index too) has nothing to compare: the section shows from two.
  if ((rows?.length ?? 0) < 2 && (routing?.replicas ?? 0) < 2) return '';
  const parts: string[] = [];
  if (routing !== null) {
    const lost = routing.lost_to_routing_tokens;
    const loss =
      lost >= 0
        ? `The router's choices lost <strong>${escapeHtml(fmtPercent(routing.lost_to_routing_share))}</strong> of the hits one ideal cache would have had (${escapeHtml(counted(lost, 'token'))})`
        : `The replicas' own caches hit ${escapeHtml(counted(-lost, 'token'))} more than one cache would have (their added capacity outweighed the scatter)`;
    parts.push(
      `<p>${loss}: one cache expected ${routing.expected_cached_tokens_one_cache} cached tokens, one cache per replica ${routing.expected_cached_tokens_per_replica}. ` +
        `${routing.sessions_split} of ${escapeHtml(counted(routing.sessions, 'session'))} had turns on more than one of the ${escapeHtml(counted(routing.replicas, 'replica'))}.</p>`,
    );
  }
  if (rows !== null && rows.length > 0) {
    const byMetrics = rows.every((r) => r.source === 'metrics');
    parts.push(
      `<p class="muted">${byMetrics ? "Per-replica totals from each replica's /metrics counter deltas over the run (no request-level attribution)." : "From each response's replica header."} ` +
        'Expected: the model\'s hit in that replica\'s own cache; efficiency: Σ cached / Σ expected.</p>',
    );
    const head = ['replica', 'requests', 'input tokens', 'cached tokens', 'expected cached', 'hit ratio', 'efficiency'];
    parts.push(htmlTable(head, rows.map((r) => [r.replica, r.requests, r.input_tokens, r.cached_tokens, r.expected_cached_tokens, fmtPercent(r.hit_ratio), fmtPercent(r.efficiency)])));
  }
  return parts.join('\n');
}
