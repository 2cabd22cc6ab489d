import type { RequestRecord } from '../metrics/record.js';
import { describe } from '../metrics/stats.js';
import { escapeHtml, htmlTable } from './html-util.js';

/*
 * The report's agentic section (issue #14): sessions of hundreds of steps, where turn numbers stop being meaningful.
 * Steps are bucketed by context length (the prompt tokens the request carried); each session (its sub-agents with it)
 * gets its context growth and tool-call time. Rendered only when some request called a tool or belonged to a
 * sub-agent. Its own file, so the report keeps one small hook (html.ts).
 */

/** Context buckets in prompt tokens, up to the 256k of long-context models. */
const EDGES = [0, 1024, 4096, 16384, 32768, 65536, 131072, 262144];

function label(tokens: number): string {
  return tokens === 0 ? '0' : `${tokens / 1024}k`;
}

function bucketOf(tokens: number): number {
  let b = EDGES.length - 1;
  while (tokens < EDGES[b]!) b -= 1;
  return b;
}

function p(values: number[], q: 'p50' | 'p99'): number | null {
  const stats = describe(values);
  return stats === null ? null : stats[q];
}

/** True when the run has agentic requests (a tool call, a divergence, or a sub-agent). */
export function hasAgenticRecords(records: readonly RequestRecord[]): boolean {
  return records.some((r) => r.tool_call_ms != null || r.tool_divergence != null || r.parent_conversation_id != null);
}

/** The section's body: steps by context length, then one row per session. Empty string when nothing is agentic. */
export function agenticSectionHtml(records: readonly RequestRecord[]): string {
  if (!hasAgenticRecords(records)) return '';
  const ok = records.filter((r) => !r.warmup && r.status === 'ok');
  const byBucket = new Map<number, RequestRecord[]>();
  for (const r of ok) {
    const b = bucketOf(r.input_num_tokens);
    const list = byBucket.get(b);
    if (list === undefined) byBucket.set(b, [r]);
    else list.push(r);
  }
  const bucketRows = [...byBucket.entries()]
    .sort(([a], [b]) => a - b)
    .map(([b, rs]) => {
      const max = EDGES[b + 1];
      const ttft = rs.flatMap((r) => (r.ttft_ms === null ? [] : [r.ttft_ms]));
      const tool = rs.flatMap((r) => (r.tool_call_ms == null ? [] : [r.tool_call_ms]));
      return [`${label(EDGES[b]!)}-${max === undefined ? '' : label(max)}`, rs.length, tool.length, p(ttft, 'p50'), p(ttft, 'p99'), p(tool, 'p50'), p(tool, 'p99')];
    });
  const sessions = new Map<string, RequestRecord[]>();
  for (const r of ok) {
    const id = r.parent_conversation_id ?? r.conversation_id;
    const list = sessions.get(id);
    if (list === undefined) sessions.set(id, [r]);
    else list.push(r);
  }
  const sessionRows = [...sessions.entries()].map(([id, rs]) => {
    const own = rs.filter((r) => r.conversation_id === id).sort((a, b) => a.turn - b.turn);
    const tool = rs.flatMap((r) => (r.tool_call_ms == null ? [] : [r.tool_call_ms]));
    const growth = own.length === 0 ? '-' : `${own[0]!.input_num_tokens} → ${own[Math.floor(own.length / 2)]!.input_num_tokens} → ${own.at(-1)!.input_num_tokens}`;
    return [id, own.length, rs.length - own.length, growth, tool.length, p(tool, 'p50'), rs.filter((r) => r.tool_divergence != null).length];
  });
  return (
    `<h3>Steps by context length</h3>` +
    htmlTable(['prompt tokens', 'steps', 'tool calls', 'TTFT p50 (ms)', 'TTFT p99 (ms)', 'tool-call time p50 (ms)', 'tool-call time p99 (ms)'], bucketRows) +
    `<h3>Sessions</h3><p class="muted">${escapeHtml('Context growth: prompt tokens of the session\'s first, middle and last step. Sub-agent steps are counted with their session.')}</p>` +
    htmlTable(['session', 'steps', 'sub-agent steps', 'context growth (tokens)', 'tool calls', 'tool-call time p50 (ms)', 'divergences'], sessionRows)
  );
}
