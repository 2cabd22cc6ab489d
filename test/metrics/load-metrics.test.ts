import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/errors/index.js';
import { meetsSlos, parseSlos } from '../../src/metrics/goodput.js';
import { conversationStats, summarizePerConversation } from '../../src/metrics/per-conversation.js';
import { summarize, ttftByContext } from '../../src/metrics/summary.js';
import { parseServerMetrics } from '../../src/server-metrics/parse.js';
import { makeFailed, makeRecord } from './record-fixtures.js';

describe('goodput', () => {
  test('parses vllm bench serve\'s SLO form and rejects anything else in one line', () => {
    assert.deepEqual(parseSlos(['ttft:200', 'tpot:50', 'e2el:5000']), { ttft_ms: 200, tpot_ms: 50, e2el_ms: 5000 });
    for (const bad of ['ttft', 'ttft:', 'itl:5', 'ttft:-1', 'ttft:0', 'e2el:5s']) {
      assert.throws(() => parseSlos([bad]), (e: unknown) => e instanceof ConfigError && e.exitCode === 2 && /--goodput/.test(e.message));
    }
  });

  test('a request meets the SLOs only when it completed within every objective', () => {
    const slos = { ttft_ms: 100, tpot_ms: 20, e2el_ms: 1000 };
    assert.ok(meetsSlos(makeRecord({ ttft_ms: 100, tpot_ms: 20, e2el_ms: 1000 }), slos));
    assert.ok(!meetsSlos(makeRecord({ ttft_ms: 101 }), slos));
    assert.ok(!meetsSlos(makeRecord({ tpot_ms: 21 }), slos));
    assert.ok(!meetsSlos(makeRecord({ e2el_ms: 1001 }), slos));
    assert.ok(meetsSlos(makeRecord({ tpot_ms: null }), slos), 'one output token has no TPOT');
    assert.ok(!meetsSlos(makeFailed('http_status'), {}), 'a failed request never meets');
    // Goodput as runs compute it (the summary's): 2 of 4 requests met every SLO, over the 0.5 s from the first send to
    // the last end (the records' own times, set here).
    const records = [makeRecord({ done_at_ms: 200 }), makeRecord({ ttft_ms: 500 }), makeFailed('timeout_total'), makeRecord({ sent_at_ms: 100, done_at_ms: 500 })];
    assert.deepEqual(summarize(records, { slos }).goodput, { slos, good_requests: 2, share: 0.5, request_goodput: 4 });
  });

  test('summaries carry goodput only with SLOs', () => {
    assert.equal(summarize([makeRecord()]).goodput, null);
    assert.equal(summarize([makeRecord()], { slos: { ttft_ms: 5 } }).goodput!.good_requests, 0);
  });
});

describe('schedule lag in summaries', () => {
  test('lag, queue and from-schedule latencies are summarized over records that had a schedule', () => {
    const scheduled = makeRecord({ scheduled_at_ms: 0, schedule_lag_ms: 30, queue_ms: 20, ttft_from_scheduled_ms: 40, e2el_from_scheduled_ms: 130 });
    const s = summarize([scheduled, makeRecord()]);
    assert.equal(s.metrics.schedule_lag_ms!.count, 1);
    assert.equal(s.metrics.queue_ms!.max, 20);
    assert.equal(s.metrics.e2el_from_scheduled_ms!.p50, 130);
    assert.equal(summarize([makeRecord()]).metrics.schedule_lag_ms, null);
  });
});

describe('TTFT by context length', () => {
  test('buckets completed requests by input tokens, powers of two from 1k', () => {
    const buckets = ttftByContext([
      makeRecord({ input_num_tokens: 10, ttft_ms: 5 }),
      makeRecord({ input_num_tokens: 1023, ttft_ms: 7 }),
      makeRecord({ input_num_tokens: 1024, ttft_ms: 20 }),
      makeRecord({ input_num_tokens: 40_000, ttft_ms: 900 }),
      makeFailed('http_status', { input_num_tokens: 3000 }),
    ]);
    assert.deepEqual(buckets.map((b) => [b.label, b.count, b.ttft_ms!.max]), [['0-1k', 2, 7], ['1k-2k', 1, 20], ['32k-64k', 1, 900]]);
  });
});

describe('per conversation', () => {
  test('duration, turns and cumulative tokens of each conversation, warmup left out', () => {
    const records = [
      makeRecord({ conversation_id: 'a', turn: 1, sent_at_ms: 0, done_at_ms: 100, input_num_tokens: 10, output_num_tokens: 5, cached_tokens: 0 }),
      makeRecord({ conversation_id: 'a', turn: 2, sent_at_ms: 150, done_at_ms: 400, input_num_tokens: 30, output_num_tokens: 5, cached_tokens: 16 }),
      makeFailed('http_status', { conversation_id: 'b', turn: 1, sent_at_ms: 10, done_at_ms: 20 }),
      makeRecord({ conversation_id: 'c', warmup: true }),
    ];
    const list = summarizePerConversation(records);
    assert.deepEqual(list, [
      { conversation_id: 'a', turns_completed: 2, turns_failed: 0, duration_ms: 400, cumulative_input_tokens: 40, cumulative_output_tokens: 10, cumulative_cached_tokens: 16 },
      { conversation_id: 'b', turns_completed: 0, turns_failed: 1, duration_ms: 10, cumulative_input_tokens: 0, cumulative_output_tokens: 0, cumulative_cached_tokens: 0 },
    ]);
    const stats = conversationStats(list);
    assert.equal(stats.conversations, 2);
    assert.equal(stats.turns_completed!.max, 2);
    assert.equal(stats.cumulative_tokens!.max, 50);
  });
});

describe('server metrics parsing', () => {
  test('reads vLLM and SGLang names, summing label sets', () => {
    const vllm = parseServerMetrics(
      [
        '# TYPE vllm:prefix_cache_queries_total counter',
        'vllm:prefix_cache_queries_total{model_name="a"} 100',
        'vllm:prefix_cache_queries_total{model_name="b"} 50',
        '# TYPE vllm:prefix_cache_hits_total counter',
        'vllm:prefix_cache_hits_total{model_name="a"} 64',
        '# TYPE vllm:num_requests_running gauge',
        'vllm:num_requests_running{model_name="a"} 3',
        '# TYPE vllm:gpu_cache_usage_perc gauge',
        'vllm:gpu_cache_usage_perc{model_name="a"} 0.25',
        '',
      ].join('\n'),
    );
    assert.deepEqual(vllm, { prefix_cache_queries: 150, prefix_cache_hits: 64, requests_running: 3, requests_waiting: null, kv_cache_usage: 0.25 });
    const sglang = parseServerMetrics('# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{name="x"} 7\n# TYPE sglang:token_usage gauge\nsglang:token_usage 0.5\n');
    assert.equal(sglang.requests_waiting, 7);
    assert.equal(sglang.kv_cache_usage, 0.5);
  });
});
