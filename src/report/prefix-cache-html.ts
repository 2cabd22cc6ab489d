import { MISS_CAUSES, type RunPrefixCache } from '../metrics/prefix-cache-tally.js';
import { lineChart, type SeriesPoint } from './charts.js';
import { chartFigure, escapeHtml, fmtPercent, htmlTable } from './html-util.js';
import { counted } from '../util/plural.js';

/**
 * The report's "Prefix cache" section: per turn, the server's hit ratio against the expected-cache model's (with its
 * capacity, with none, and the conversation's own history alone), the share of the expected hit that came from other
 * conversations, and the efficiency. (The pressure curve of `sweep --cache-pressure` is on the sweep's page.)
 */
export function prefixCacheHtml(p: RunPrefixCache | null): string {
  if (p === null) return '<p class="muted">Not recorded (results.json has no prefix_cache: a run before the global expected-cache model).</p>';
  const m = p.model;
  const finite = m.capacity_model !== 'infinite';
  const scopeText = (d: typeof m): string =>
    d.scope === 'per-worker'
      ? 'each worker thread indexed its own conversations (--workers), so prefixes shared across threads are not counted'
      : d.scope === 'per-shard'
        ? `each merged run indexed its own conversations: ${escapeHtml(d.scope_note ?? 'prefixes shared across runs are not counted')}`
        : 'one index over every conversation, in the order they were sent';
  const model = finite ? `LRU eviction at ${m.capacity_tokens} tokens (from ${m.capacity_source})` : 'no eviction (infinite KV cache)';
  const intro =
    `<p>Expected: the longest ${m.block_size}-token-block prefix of each prompt already sent in this run by any conversation, ${escapeHtml(model)}; ` +
    `${scopeText(m)}. ` +
    `Own history: the conversation's previous prompt and answer alone. Efficiency: Σ cached / Σ expected.</p>`;
  const points: SeriesPoint[] = [];
  for (const t of p.per_turn) {
    if (t.hit_ratio !== null) points.push({ x: t.turn, y: t.hit_ratio, series: 'actual (server)' });
    if (t.expected_hit_ratio !== null) points.push({ x: t.turn, y: t.expected_hit_ratio, series: finite ? 'expected (capacity)' : 'expected' });
    if (finite && t.expected_hit_ratio_infinite !== null) points.push({ x: t.turn, y: t.expected_hit_ratio_infinite, series: 'expected (infinite)' });
    if (t.expected_hit_ratio_own_history !== null) points.push({ x: t.turn, y: t.expected_hit_ratio_own_history, series: 'own history only' });
  }
  const chart =
    points.length === 0
      ? ''
      : chartFigure(
          'prefix-cache-per-turn',
          'Prefix-cache hit ratio by turn: actual against expected',
          lineChart(points, {
            xLabel: 'turn',
            xIntegers: true,
            yLabel: 'cached / prompt',
            yPercent: true,
            dots: true,
            seriesOrder: ['actual (server)', 'expected (capacity)', 'expected', 'expected (infinite)', 'own history only'],
          }),
        );
  const head = ['turn', 'requests', 'actual', 'expected', ...(finite ? ['expected (infinite)'] : []), 'own history', 'from other conversations', 'efficiency', 'efficiency (own history)'];
  const rowOf = (label: string | number, t: RunPrefixCache['totals']): Array<string | number> => [
    label,
    t.requests,
    fmtPercent(t.hit_ratio),
    fmtPercent(t.expected_hit_ratio),
    ...(finite ? [fmtPercent(t.expected_hit_ratio_infinite)] : []),
    fmtPercent(t.expected_hit_ratio_own_history),
    fmtPercent(t.shared_prefix_share),
    fmtPercent(t.efficiency),
    fmtPercent(t.efficiency_own_history),
  ];
  const table = htmlTable(head, [rowOf('all', p.totals), ...p.per_turn.map((t) => rowOf(t.turn, t))]);
  return intro + semanticsHtml(p) + chart + table + missesHtml(p);
}

/** How each `shared_from` reads in a sentence (docs/METRICS.md, "Its own blocks become visible"). */
const SHARED_FROM_TEXT: Record<string, string> = {
  schedule: 'from the engine step it is scheduled in (by requests admitted after it in that step too)',
  prefill: 'once its prefill step is done (not by its batch-mates)',
  end: 'once its request ends',
};

/** Which engine's semantics and whose token ids the model ran, and why efficiency may not compare. */
function semanticsHtml(p: RunPrefixCache): string {
  const s = p.model.semantics;
  const ids = p.model.token_ids === 'server' ? "the server's own token ids (its tokenize endpoints)" : "the local tokenizer's ids";
  const semantics =
    s === undefined
      ? ''
      : ` Semantics of ${escapeHtml(s.engine)}: ${s.block_size}-token units, a prompt shared with others ${SHARED_FROM_TEXT[s.shared_from] ?? escapeHtml(String(s.shared_from))}` +
        `${s.slots === null ? '' : `, ${counted(s.slots, 'slot')}`} (${escapeHtml(s.sources.join('; '))}).`;
  const warm = p.totals.warm_start_tokens > 0 ? ` The server's cache was warm: ${p.totals.warm_start_tokens} cached tokens came from before the run and are left out of efficiency.` : '';
  const t = p.totals;
  const beyond =
    t.beyond_expected_tokens > 0
      ? ` The server served ${counted(t.beyond_expected_tokens, 'cached token')} of the run's own prompts beyond what the model expected, in ${counted(t.beyond_expected_requests, 'request')} (it read the cache at another moment than the server did, or saw the requests in another order): efficiency counts them in the model's favour.`
      : '';
  const comparable = p.comparable === false ? ` <strong>Efficiency not comparable:</strong> ${escapeHtml(p.not_comparable ?? '')}.` : '';
  return `<p>Counted in ${ids}.${semantics}${warm}${beyond}${comparable}</p>`;
}

/** "Why the cache missed": the missed tokens of each cause, in all and per turn (docs/METRICS.md). */
function missesHtml(p: RunPrefixCache): string {
  const t = p.totals;
  if (t.misses === undefined) return '';
  if (t.misses.tokens === 0) return '<h3>Why the cache missed</h3><p class="muted">The server cached everything the model expected.</p>';
  const causes = MISS_CAUSES.filter((c) => t.misses.causes[c] > 0);
  const share = (n: number, of: number): string => (of > 0 ? `${n} (${fmtPercent(n / of)})` : String(n));
  const rowOf = (label: string | number, row: RunPrefixCache['totals']): Array<string | number> => [
    label,
    row.expected_cached_tokens,
    row.misses.tokens,
    ...causes.map((c) => share(row.misses.causes[c], row.misses.tokens)),
  ];
  const table = htmlTable(['turn', 'expected tokens', 'missed tokens', ...causes.map((c) => c.replace(/_/g, ' '))], [rowOf('all', t), ...p.per_turn.map((row) => rowOf(row.turn, row))]);
  return '<h3>Why the cache missed</h3><p>Each request\'s missed tokens (expected beyond what the server cached) go to one cause; the causes add up to the misses.</p>' + table;
}
