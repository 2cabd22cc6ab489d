import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import { makeFailed, makeRecord } from './record-fixtures.js';

describe('summarizePerTurn', () => {
  test('groups by turn, ascending, excluding warmup', () => {
    const turns = summarizePerTurn([
      makeRecord({ turn: 3, ttft_ms: 30, input_num_tokens: 300, cached_tokens: 200, expected_cached_tokens: 250 }),
      makeRecord({ turn: 1, ttft_ms: 10, input_num_tokens: 100, cached_tokens: 0 }),
      makeRecord({ turn: 1, warmup: true, ttft_ms: 999 }),
      makeRecord({ turn: 3, ttft_ms: 50, input_num_tokens: 500, cached_tokens: null, expected_cached_tokens: 450 }),
      makeFailed('timeout_ttft', { turn: 3 }),
    ]);
    assert.deepEqual(
      turns.map((t) => t.turn),
      [1, 3],
    );
    const [first, third] = turns;
    assert.equal(first!.completed, 1);
    assert.equal(first!.ttft_ms!.max, 10);
    assert.equal(first!.cache_hit_ratio, 0);
    assert.equal(third!.completed, 2);
    assert.equal(third!.failed, 1);
    assert.equal(third!.ttft_ms!.p50, 40);
    assert.equal(third!.input_num_tokens!.mean, 400);
    assert.equal(third!.cached_tokens!.count, 1);
    assert.equal(third!.expected_cached_tokens!.mean, 350);
    assert.equal(third!.cache_hit_ratio, 200 / 300);
  });

  test('a turn with only failures has null stats', () => {
    const [t] = summarizePerTurn([makeFailed('dns', { turn: 2 })]);
    assert.equal(t!.completed, 0);
    assert.equal(t!.failed, 1);
    assert.equal(t!.ttft_ms, null);
    assert.equal(t!.cache_hit_ratio, null);
  });
});
