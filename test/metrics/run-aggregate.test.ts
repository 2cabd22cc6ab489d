import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summarizePerConversation } from '../../src/metrics/per-conversation.js';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { RunAggregate, type RunAggregateOptions } from '../../src/metrics/run-aggregate.js';
import { summarize, type Summary } from '../../src/metrics/summary.js';
import { Rng } from '../../src/util/rng.js';
import { assertStatsClose } from '../helpers/stats-close.js';
import { makeFailed, makeRecord } from './record-fixtures.js';
import { assertAgainstReference } from '../helpers/summary-reference.js';

const us = (x: number): number => Math.round(x * 1000) / 1000;

/** Varied records: warmup, failures of two kinds, 5 turns, cached or not, scheduled or not, send times with ties. */
function records(count: number, seed = 3): RequestRecord[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, (_, i) => {
    const sent = Math.floor(i / 3) * 2.5;
    const base = { conversation_id: `c${i % 41}`, turn: 1 + (i % 5), warmup: i % 29 === 0, sent_at_ms: sent, input_num_tokens: rng.int(10, 20_000) };
    if (i % 17 === 3) return makeFailed(i % 2 === 0 ? 'timeout_ttft' : 'http_status', { ...base, done_at_ms: sent + 40 });
    const ttft = us(15 + rng.exponential(80));
    const gaps = Array.from({ length: rng.int(0, 25) }, () => us(4 + rng.exponential(15)));
    const e2el = us(ttft + gaps.reduce((a, b) => a + b, 0));
    const scheduled = i % 4 === 1;
    return makeRecord({
      ...base,
      done_at_ms: us(sent + e2el),
      ttft_ms: ttft,
      tpot_ms: gaps.length > 0 ? us((e2el - ttft) / gaps.length) : null,
      itl_ms: gaps,
      e2el_ms: e2el,
      output_num_tokens: gaps.length + 1,
      output_tokens_source: i % 7 === 0 ? 'local' : 'server',
      cached_tokens: i % 3 === 0 ? null : rng.int(0, 5_000),
      expected_cached_tokens: rng.int(0, 5_000),
      schedule_lag_ms: scheduled ? us(rng.next() * 9) : null,
      queue_ms: scheduled ? us(rng.next() * 3) : 0,
      ttft_from_scheduled_ms: scheduled ? us(ttft + 2) : null,
      e2el_from_scheduled_ms: scheduled ? us(e2el + 2) : null,
    });
  });
}

const OPTIONS: RunAggregateOptions = { slos: { ttft_ms: 90, e2el_ms: 400 }, warmupPercentages: [0, 25, 60] };
const viaJson = (a: RunAggregate): RunAggregate => RunAggregate.fromJSON(JSON.parse(JSON.stringify(a)));

/** The aggregate of `list` built as worker threads do: contiguous parts, each serialized, merged in order. */
function mergedParts(list: readonly RequestRecord[], parts: number, options: RunAggregateOptions): RunAggregate {
  const out = new RunAggregate(options);
  const size = Math.ceil(list.length / parts);
  for (let p = 0; p < parts; p++) out.merge(viaJson(RunAggregate.fromRecords(list.slice(p * size, (p + 1) * size), options)));
  return out;
}

function assertCountersEqual(actual: Summary, expected: Summary, label: string): void {
  const counters = (s: Summary) => ({ ...s, metrics: null, ttft_by_context: s.ttft_by_context.map((b) => [b.label, b.count]), approximate_metrics: null });
  assert.deepEqual(counters(actual), counters(expected), label);
}

describe('RunAggregate', () => {
  const list = records(1_500);

  test('exact: the same tables as the in-memory summaries', () => {
    const aggregate = RunAggregate.fromRecords(list, OPTIONS);
    assert.equal(aggregate.exact, true);
    assertAgainstReference(aggregate.summary(), list, OPTIONS.slos!, 'all');
    assert.deepEqual(aggregate.summary(), summarize(list, { slos: OPTIONS.slos }));
    assert.deepEqual(aggregate.perTurn(), summarizePerTurn(list, { slos: OPTIONS.slos }));
    assert.deepEqual(aggregate.perConversation(), summarizePerConversation(list));
    assert.equal(aggregate.warmupPercentagesNeedRecords, false, 'the log holds what the cuts need');
    const cuts = aggregate.warmupPercentages();
    assert.deepEqual(Object.keys(cuts), ['0%', '25%', '60%']);
    assert.equal(cuts['0%'], aggregate.summary());
    // A cut is the summary of the records left once the first share by send time (stable among ties) is dropped.
    const measured = list.filter((r) => !r.warmup);
    const ordered = [...measured].sort((a, b) => a.sent_at_ms - b.sent_at_ms);
    const dropped = Math.floor(0.6 * measured.length);
    const warmup = list.length - measured.length;
    assertAgainstReference(cuts['60%']!, ordered.slice(dropped), OPTIONS.slos!, '60% cut');
    assert.equal(cuts['60%']!.warmup_excluded, warmup + dropped);
    assert.deepEqual(cuts['60%'], { ...summarize(ordered.slice(dropped), { slos: OPTIONS.slos }), warmup_excluded: warmup + dropped });
  });

  test('parts merged through JSON give the aggregate of all records (worker threads, shards)', () => {
    const whole = RunAggregate.fromRecords(list, OPTIONS);
    const merged = mergedParts(list, 3, OPTIONS);
    assert.equal(merged.records, list.length);
    assert.deepEqual(merged.summary(), whole.summary());
    assert.deepEqual(merged.perTurn(), whole.perTurn());
    assert.deepEqual(merged.perConversation(), whole.perConversation());
    assert.deepEqual(merged.warmupPercentages(), whole.warmupPercentages());
    // The histograms hold the same buckets; sum and m2 merge by Chan's formula (equal up to rounding).
    const [m, w] = [merged.histograms.toJSON(), whole.histograms.toJSON()];
    for (const metric of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms'] as const) {
      assert.deepEqual([m[metric].hdr, m[metric].count, m[metric].min, m[metric].max], [w[metric].hdr, w[metric].count, w[metric].min, w[metric].max], metric);
      assert.ok(Math.abs(m[metric].sum - w[metric].sum) <= 1e-9 * w[metric].sum && Math.abs(m[metric].m2 - w[metric].m2) <= 1e-9 * w[metric].m2, metric);
    }
  });

  test('past exactRecords: every Stats from histograms, fed in the order the records came whenever the limit is passed', () => {
    const exact = RunAggregate.fromRecords(list, OPTIONS);
    const fromStart = RunAggregate.fromRecords(list, { ...OPTIONS, exactRecords: 0 });
    // Passed mid-way, the rows kept so far move into the histograms a few per add(): the same result, bit for bit.
    const midway = RunAggregate.fromRecords(list, { ...OPTIONS, exactRecords: 700 });
    assert.equal(midway.exact, false);
    assert.deepEqual(midway.summary(), fromStart.summary());
    assert.deepEqual(midway.perTurn(), fromStart.perTurn());
    const s = midway.summary();
    assertCountersEqual(s, exact.summary(), 'counters exact');
    assert.ok(s.approximate_metrics.includes('ttft_by_context') && s.approximate_metrics.includes('cached_tokens'));
    for (const metric of ['ttft_ms', 'itl_ms', 'e2el_ms', 'input_num_tokens', 'schedule_lag_ms'] as const) {
      assertStatsClose(s.metrics[metric], exact.summary().metrics[metric], metric);
    }
    midway.perTurn().forEach((turn, i) => {
      const e = exact.perTurn()[i]!;
      assert.deepEqual([turn.turn, turn.completed, turn.failed, turn.cache_hit_ratio, turn.goodput_share], [e.turn, e.completed, e.failed, e.cache_hit_ratio, e.goodput_share]);
      assertStatsClose(turn.e2el_ms, e.e2el_ms, `turn ${turn.turn}`);
    });
    assert.deepEqual(midway.perConversation(), exact.perConversation(), 'per conversation stays exact');
  });

  test('merges across the limit: exact parts whose sum passes it, and exact with histogram parts', () => {
    const options = { ...OPTIONS, exactRecords: 600 };
    const whole = RunAggregate.fromRecords(list, options);
    for (const parts of [3, 2]) {
      // 3 parts of 500 stay exact each and pass the limit together; with 2 parts of 750 both are past it.
      const merged = mergedParts(list, parts, options);
      assert.equal(merged.exact, false);
      assertCountersEqual(merged.summary(), whole.summary(), `${parts} parts`);
      assert.deepEqual(merged.summary().approximate_metrics, whole.summary().approximate_metrics);
      assertStatsClose(merged.summary().metrics.tpot_ms, whole.summary().metrics.tpot_ms, 'tpot');
      assert.deepEqual(merged.perConversation(), whole.perConversation());
    }
    const mixed = RunAggregate.fromRecords(list.slice(0, 100), options).merge(RunAggregate.fromRecords(list.slice(100), options));
    assertCountersEqual(mixed.summary(), whole.summary(), 'exact + histogram');
    const mixedOther = RunAggregate.fromRecords(list.slice(0, 1_000), options).merge(RunAggregate.fromRecords(list.slice(1_000), options));
    assertCountersEqual(mixedOther.summary(), whole.summary(), 'histogram + exact');
  });

  test('warmup percentages past the limits need the records once more, and are exact cuts then', async () => {
    for (const options of [{ ...OPTIONS, exactRecords: 500 }, { ...OPTIONS, exactGaps: 1_000 }]) {
      const aggregate = RunAggregate.fromRecords(list, options);
      assert.equal(aggregate.warmupPercentagesNeedRecords, true);
      assert.throws(() => aggregate.warmupPercentages(), /need the records again/);
      assert.throws(() => aggregate.warmupPercentages(list.slice(2)), /measured records, the aggregate/);
      const fromReplay = await aggregate.warmupPercentagesFrom(async (visit) => list.forEach(visit));
      const exact = RunAggregate.fromRecords(list, OPTIONS).warmupPercentages();
      for (const key of ['25%', '60%']) {
        assertCountersEqual(fromReplay[key]!, exact[key]!, key);
        assertStatsClose(fromReplay[key]!.metrics.itl_ms, exact[key]!.metrics.itl_ms, `${key} itl`);
      }
    }
  });

  test('refuses a merge of aggregates made with other options, and what is not a serialized aggregate', () => {
    assert.throws(() => new RunAggregate(OPTIONS).merge(new RunAggregate({ ...OPTIONS, warmupPercentages: [0] })), /different options/);
    assert.throws(() => RunAggregate.fromJSON({ format: 'something else' }), TypeError);
    assert.throws(() => new RunAggregate({ warmupPercentages: [100] }), RangeError);
  });
});
