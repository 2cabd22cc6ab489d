import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summarize, summarizeWarmupPercentages } from '../../src/metrics/summary.js';
import { ERROR_KINDS } from '../../src/metrics/error-kinds.js';
import { makeFailed, makeRecord } from './record-fixtures.js';

describe('summarize', () => {
  test('empty input', () => {
    const s = summarize([]);
    assert.equal(s.completed, 0);
    assert.equal(s.runtime_sec, 0);
    assert.equal(s.request_throughput, 0);
    assert.equal(s.cache_hit_ratio, null);
    assert.equal(s.cache_efficiency, null);
    assert.equal(s.metrics.ttft_ms, null);
    assert.equal(s.failed_by_kind.http_status, 0);
  });

  test('throughputs over first send to last end, tokens of completed only', () => {
    const records = [
      makeRecord({ sent_at_ms: 1000, done_at_ms: 2000, input_num_tokens: 100, output_num_tokens: 10 }),
      makeRecord({ sent_at_ms: 1500, done_at_ms: 2500, input_num_tokens: 200, output_num_tokens: 30 }),
      // The failure spans the end of the run: runtime covers it, its tokens do not count.
      makeFailed('timeout_total', { sent_at_ms: 2000, done_at_ms: 3000, input_num_tokens: 999, output_num_tokens: 5 }),
      makeRecord({ warmup: true, sent_at_ms: 0, done_at_ms: 5000 }),
    ];
    const s = summarize(records);
    assert.equal(s.requests, 3);
    assert.equal(s.completed, 2);
    assert.equal(s.failed, 1);
    assert.equal(s.warmup_excluded, 1);
    assert.equal(s.runtime_sec, 2);
    assert.equal(s.request_throughput, 1);
    assert.equal(s.total_input_tokens, 300);
    assert.equal(s.total_output_tokens, 40);
    assert.equal(s.output_throughput, 20);
    assert.equal(s.total_token_throughput, 170);
    assert.equal(s.error_rate, 1 / 3);
  });

  test('failed_by_kind counts every kind', () => {
    const s = summarize([
      makeFailed('http_status'),
      makeFailed('http_status'),
      makeFailed('timeout_ttft'),
      makeRecord({ status: 'error', error_kind: null }),
      makeRecord(),
    ]);
    assert.equal(s.failed, 4);
    assert.equal(s.failed_by_kind.http_status, 2);
    assert.equal(s.failed_by_kind.timeout_ttft, 1);
    assert.equal(s.failed_by_kind.other, 1);
    assert.equal(s.failed_by_kind.dns, 0);
    assert.equal(s.failed_by_kind.empty_answer, 0);
    assert.deepEqual(Object.keys(s.failed_by_kind), [...ERROR_KINDS], 'every kind of the shared list, in its order');
  });

  test('cache hit ratio and cache efficiency only over records where they are known', () => {
    const s = summarize([
      makeRecord({ turn: 1, input_num_tokens: 100, cached_tokens: 0, expected_cached_tokens: 0 }),
      makeRecord({ turn: 2, input_num_tokens: 200, cached_tokens: 150, expected_cached_tokens: 160 }),
      makeRecord({ turn: 3, input_num_tokens: 300, cached_tokens: 200, expected_cached_tokens: 240 }),
      // Unknown cached tokens (server did not report): left out of both ratios.
      makeRecord({ turn: 2, input_num_tokens: 1000, cached_tokens: null, expected_cached_tokens: 500 }),
    ]);
    assert.equal(s.total_cached_tokens, 350);
    assert.equal(s.total_expected_cached_tokens, 900);
    assert.equal(s.cached_tokens_known, 3);
    assert.equal(s.cache_hit_ratio, 350 / 600);
    assert.equal(s.cache_efficiency, 350 / 400);
    assert.equal(s.metrics.cached_tokens!.count, 3);
    assert.equal(s.metrics.expected_cached_tokens!.count, 4);
  });

  test('metrics pool itl gaps and skip null tpot; token sources counted', () => {
    const s = summarize([
      makeRecord({ itl_ms: [1, 2], tpot_ms: 5, input_tokens_source: 'local', output_tokens_source: 'local' }),
      makeRecord({ itl_ms: [3], tpot_ms: null }),
      makeFailed('aborted', { itl_ms: [100] }),
    ]);
    assert.equal(s.metrics.itl_ms!.count, 3);
    assert.equal(s.metrics.itl_ms!.max, 3);
    assert.equal(s.metrics.tpot_ms!.count, 1);
    assert.equal(s.metrics.e2el_ms!.count, 2);
    assert.deepEqual(s.token_sources, { input: { server: 1, local: 1 }, output: { server: 1, local: 1 } });
  });
});

describe('summarizeWarmupPercentages', () => {
  // Ten records started out of order; e2el tells them apart.
  const records = [5, 2, 8, 0, 9, 1, 7, 3, 6, 4].map((i) =>
    makeRecord({ sent_at_ms: i * 100, done_at_ms: i * 100 + 50, e2el_ms: i, latency_ms: i }),
  );

  test('drops the first share by start time', () => {
    const out = summarizeWarmupPercentages([...records, makeRecord({ warmup: true })], [50, 0]);
    assert.deepEqual(Object.keys(out), ['0%', '50%']);
    assert.equal(out['0%']!.completed, 10);
    assert.equal(out['0%']!.warmup_excluded, 1);
    assert.equal(out['50%']!.completed, 5);
    assert.equal(out['50%']!.warmup_excluded, 6);
    assert.equal(out['50%']!.metrics.e2el_ms!.min, 5);
    assert.equal(out['50%']!.runtime_sec, (950 - 500) / 1000);
  });

  test('floors the dropped count, like int() in the reference', () => {
    const out = summarizeWarmupPercentages(records, [25, 12.5]);
    assert.equal(out['25%']!.completed, 8); // int(0.25 * 10) = 2 dropped
    assert.equal(out['12.5%']!.completed, 9);
  });

  test('rejects out-of-range percentages; no entry when nothing would remain', () => {
    assert.throws(() => summarizeWarmupPercentages(records, [100]), RangeError);
    assert.throws(() => summarizeWarmupPercentages(records, [-1]), RangeError);
    assert.deepEqual(summarizeWarmupPercentages([makeRecord()], [99]), { '99%': summarizeWarmupPercentages([makeRecord()], [0])['0%'] });
    assert.deepEqual(summarizeWarmupPercentages([], [0]), {});
  });
});
