import type { ReplicaRow, RoutingLoss } from '../metrics/replica-tally.js';
import { escapeControl } from '../util/control-chars.js';
import { counted } from '../util/plural.js';
import { textTable } from './text-table.js';

/*
 * The terminal's replicas section (issue #31): what the router's choices cost the prefix cache, in one line, and one
 * row per replica. Replica names are server data: escaped again here (a results.json may come from anywhere).
 */

const pct = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
const num = (x: number | null): string => (x === null ? '-' : String(x));

/** The routing line: the share of the one ideal cache's hits the router lost, and the sessions it scattered. */
export function routingLine(r: RoutingLoss): string {
  const lost = r.lost_to_routing_tokens;
  const loss =
    lost >= 0
      ? `lost ${pct(r.lost_to_routing_share)} of the ideal hits to routing (${counted(lost, 'token')})`
      : `no loss: the replicas' own caches hit ${counted(-lost, 'token')} more than one cache`;
  return (
    `${loss} | one cache ${r.expected_cached_tokens_one_cache} expected, one per replica ${r.expected_cached_tokens_per_replica} | ` +
    `${r.sessions_split} of ${counted(r.sessions, 'session')} scattered over more than one of ${counted(r.replicas, 'replica')}`
  );
}

/** One row per replica: requests, tokens, the expected hit in its own cache, hit ratio and efficiency. */
export function replicasTable(rows: readonly ReplicaRow[], options: { bold: (text: string) => string; color: boolean; width?: number }): string {
  const head = ['replica', 'requests', 'input', 'cached', 'expected', 'hit ratio', 'efficiency'];
  const table = rows.map((r) => [escapeControl(r.replica), num(r.requests), num(r.input_tokens), num(r.cached_tokens), num(r.expected_cached_tokens), pct(r.hit_ratio), pct(r.efficiency)]);
  const source = rows.every((r) => r.source === 'metrics') ? ' (from each replica\'s /metrics counter deltas)' : ' (from each response\'s replica header)';
  const fit = options.width === undefined ? undefined : { width: options.width, dropOrder: [6, 4, 2] };
  const align = ['left', 'right', 'right', 'right', 'right', 'right', 'right'] as const;
  return `${options.bold('replicas')}${source}\n${textTable(table, { head, align: [...align], color: options.color, fit })}`;
}
