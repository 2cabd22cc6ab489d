import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PrefixCacheTally, type RunPrefixCache } from '../../src/metrics/prefix-cache-tally.js';
import { RunAggregate } from '../../src/metrics/run-aggregate.js';
import { prefixCacheHtml } from '../../src/report/prefix-cache-html.js';
import { prefixCacheLine } from '../../src/report/terminal.js';
import { makeRecord } from './record-fixtures.js';

const records = [
  // Turn 1 of the second conversation: 496 tokens expected from the other conversation's common prefix.
  makeRecord({ turn: 1, input_num_tokens: 1000, cached_tokens: 0, expected_cached_tokens: 0, expected_cached_tokens_infinite: 0, expected_cached_tokens_own_history: 0 }),
  makeRecord({ turn: 1, input_num_tokens: 1000, cached_tokens: 496, expected_cached_tokens: 496, expected_cached_tokens_infinite: 496, expected_cached_tokens_own_history: 0 }),
  // Turn 2: the own history explains 1,100 tokens; the capacity model lost 96 of the infinite one's 1,104.
  makeRecord({ turn: 2, input_num_tokens: 1200, cached_tokens: 1000, expected_cached_tokens: 1008, expected_cached_tokens_infinite: 1104, expected_cached_tokens_own_history: 1100 }),
  makeRecord({ turn: 2, input_num_tokens: 1200, cached_tokens: null, expected_cached_tokens: 1104, expected_cached_tokens_infinite: 1104, expected_cached_tokens_own_history: 1100 }),
  makeRecord({ turn: 2, warmup: true, input_num_tokens: 5000, cached_tokens: 0, expected_cached_tokens: 5000 }),
];

test('PrefixCacheTally: per-turn sums, the shared-prefix share and the efficiencies; it merges and serializes exactly', () => {
  const tally = new PrefixCacheTally();
  for (const r of records) tally.add(r);
  const s = tally.summary();
  assert.equal(s.totals.requests, 4, 'the warmup record is left out');
  const [t1, t2] = s.per_turn;
  assert.equal(t1!.shared_prefix_tokens, 496);
  assert.equal(t1!.shared_prefix_share, 1);
  assert.equal(t1!.efficiency, 1);
  assert.equal(t1!.efficiency_own_history, null, 'no own history on turn 1');
  assert.equal(t2!.shared_prefix_tokens, 4 + 4);
  assert.equal(t2!.hit_ratio, 1000 / 1200, 'cached over the input of requests that reported it');
  assert.equal(t2!.efficiency, 1000 / 1008);
  assert.equal(t2!.efficiency_own_history, 1000 / 1100);
  assert.equal(t2!.expected_hit_ratio_infinite, 2208 / 2400);
  const a = new PrefixCacheTally();
  const b = new PrefixCacheTally();
  records.forEach((r, i) => (i % 2 === 0 ? a : b).add(r));
  assert.deepEqual(PrefixCacheTally.fromJSON(JSON.parse(JSON.stringify(a.toJSON()))).merge(b).summary(), s);
  assert.deepEqual(RunAggregate.fromJSON(JSON.parse(JSON.stringify(RunAggregate.fromRecords(records).toJSON()))).prefixCache(), s);
});

test('the terminal line and the report section say which model ran', () => {
  const tally = new PrefixCacheTally();
  for (const r of records) tally.add(r);
  const run: RunPrefixCache = { model: { block_size: 16, capacity_model: 'lru', capacity_tokens: 400_000, capacity_source: 'vllm:cache_config_info', scope: 'global' }, ...tally.summary() };
  const line = prefixCacheLine(run);
  assert.match(line, /LRU 400000 tokens \(vllm:cache_config_info\), 16-token blocks, global/);
  assert.match(line, /from other conversations \d+\.\d% of the expected/);
  const html = prefixCacheHtml(run);
  assert.match(html, /data-chart="prefix-cache-per-turn"/);
  assert.match(html, /expected \(infinite\)/);
  assert.match(prefixCacheHtml(null), /Not recorded/);
  // The engine's semantics, each in words: when a prompt is another request's.
  const said = (shared_from: 'schedule' | 'prefill' | 'end'): string =>
    prefixCacheHtml({ ...run, model: { ...run.model, semantics: { engine: 'vllm', block_size: 16, shared_from, slots: null, sources: [] } } });
  assert.match(said('schedule'), /Semantics of vllm: 16-token units, a prompt shared with others from the engine step it is scheduled in \(by requests admitted after it in that step too\)/);
  assert.match(said('prefill'), /shared with others once its prefill step is done \(not by its batch-mates\)/);
  assert.match(said('end'), /shared with others once its request ends/);
});

test('misses by cause and warm start: the causes add up, warm tokens leave efficiency, and both show in the terminal and the report (issue #30)', () => {
  const tally = new PrefixCacheTally();
  const base = { expected_cached_tokens_infinite: 0, expected_cached_tokens_own_history: 0, cache_model_input_tokens: 1000 };
  // A warm turn 1: 800 cached against 0 expected, all of it from before the run.
  tally.add(makeRecord({ ...base, turn: 1, input_num_tokens: 1000, cached_tokens: 800, expected_cached_tokens: 0, warm_start_tokens: 800 }));
  // Turn 2: 100 missed inside the previous answer, 50 to concurrency, one request with no model figure.
  tally.add(makeRecord({ ...base, turn: 2, input_num_tokens: 1000, cached_tokens: 700, expected_cached_tokens: 800, miss_cause: 'history_resent' }));
  tally.add(makeRecord({ ...base, turn: 2, input_num_tokens: 1000, cached_tokens: 750, expected_cached_tokens: 800, miss_cause: 'concurrency' }));
  tally.add(makeRecord({ ...base, turn: 2, input_num_tokens: 1000, cached_tokens: 900, expected_cached_tokens: 0, cache_model_input_tokens: null }));
  const s = tally.summary();
  assert.equal(s.totals.warm_start_tokens, 800);
  assert.deepEqual(s.totals.misses, { tokens: 150, causes: { block_rounding: 0, capacity_eviction: 0, concurrency: 50, history_resent: 100, reasoning_not_sent_back: 0, routing: 0, slot_choice: 0, unexplained: 0 } });
  assert.equal(s.totals.unmodelled_requests, 1);
  assert.equal(s.totals.efficiency, (700 + 750) / 1600, 'warm and unmodelled requests are left out');
  assert.equal(s.per_turn[0]!.efficiency, null, 'turn 1 expected nothing: its warm hit is not 100% efficiency');
  const run: RunPrefixCache = { model: { block_size: 16, capacity_model: 'infinite', capacity_tokens: null, capacity_source: null, scope: 'global' }, ...s };
  assert.match(prefixCacheLine(run), /missed 150 tokens: history resent 100 \(66\.7%\), concurrency 50 \(33\.3%\) \| warm start 800 tokens/);
  const html = prefixCacheHtml(run);
  assert.match(html, /Why the cache missed/);
  assert.match(html, /history resent/);
  assert.match(html, /The server's cache was warm: 800 cached tokens/);
});

test('beyond expected: what the server served of the run\'s own prompts past the model\'s figure is summed apart from warm start, and shown', () => {
  const tally = new PrefixCacheTally();
  const base = { expected_cached_tokens_infinite: 0, expected_cached_tokens_own_history: 0, cache_model_input_tokens: 1000, input_num_tokens: 1000 };
  // Turn 1: a first turn queued behind others served 89 of their system prompt, which the model expected none of.
  tally.add(makeRecord({ ...base, turn: 1, cached_tokens: 89, expected_cached_tokens: 0 }));
  // Turn 1: 800 cached, 700 of them warm (not the run's), 64 expected: 36 beyond.
  tally.add(makeRecord({ ...base, turn: 1, cached_tokens: 800, expected_cached_tokens: 64, warm_start_tokens: 700 }));
  // Turn 2: exactly as expected, and one under (a miss, not beyond).
  tally.add(makeRecord({ ...base, turn: 2, cached_tokens: 500, expected_cached_tokens: 500 }));
  tally.add(makeRecord({ ...base, turn: 2, cached_tokens: 400, expected_cached_tokens: 500, miss_cause: 'concurrency' }));
  // Unknown cached: neither.
  tally.add(makeRecord({ ...base, turn: 2, cached_tokens: null, expected_cached_tokens: 0 }));
  const s = tally.summary();
  assert.equal(s.totals.beyond_expected_tokens, 89 + 36);
  assert.equal(s.totals.beyond_expected_requests, 2);
  assert.equal(s.per_turn[1]!.beyond_expected_tokens, 0);
  assert.equal(s.totals.missed_tokens, 100);
  const old = JSON.parse(JSON.stringify(tally.toJSON())) as ReturnType<PrefixCacheTally['toJSON']>;
  delete (old.totals as Partial<typeof old.totals>).beyond_expected_tokens;
  assert.equal(PrefixCacheTally.fromJSON(old).summary().totals.missed_tokens, 100, "an earlier version's tally reads");
  const run: RunPrefixCache = { model: { block_size: 16, capacity_model: 'infinite', capacity_tokens: null, capacity_source: null, scope: 'global' }, ...s };
  assert.match(prefixCacheLine(run), /\| beyond expected 125 tokens \(2 requests\)$/);
  assert.match(prefixCacheHtml(run), /served 125 cached tokens of the run's own prompts beyond what the model expected, in 2 requests/);
  const none = new PrefixCacheTally();
  none.add(makeRecord({ ...base, turn: 1, cached_tokens: 500, expected_cached_tokens: 500 }));
  assert.doesNotMatch(prefixCacheLine({ ...run, ...none.summary() }), /beyond expected/);
});
