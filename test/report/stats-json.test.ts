import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REFERENCE_STATS_KEYS, toReferenceStats } from '../../src/report/stats-json.js';
import { makeFailed, makeRecord } from '../metrics/record-fixtures.js';

describe('toReferenceStats', () => {
  test('one object per completed non-warmup request, with exactly the reference keys in order', () => {
    const out = toReferenceStats([
      makeRecord({ conversation_id: 'a', client_id: 2, approx_cached_percent: 50 }),
      makeRecord({ warmup: true }),
      makeFailed('http_status'),
      makeRecord({ conversation_id: 'b', ttft_ms: null, tpot_ms: null, latency_ms: 42 }),
    ]);
    assert.equal(out.length, 2);
    for (const row of out) assert.deepEqual(Object.keys(row), [...REFERENCE_STATS_KEYS]);
    assert.equal(out[0]!.conversation_id, 'a');
    assert.equal(out[0]!.client_id, 2);
    assert.equal(out[0]!.approx_cached_percent, 50);
    assert.equal(out[0]!.ttft_ms, 10);
    assert.equal(out[1]!.ttft_ms, 42, 'no token timing: ttft is the latency, as the reference does');
    assert.equal(out[1]!.tpot_ms, 0);
  });
});
