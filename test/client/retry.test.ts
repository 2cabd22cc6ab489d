import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isRetryable, retryDelayMs } from '../../src/client/retry.js';
import { parseRetryAfterMs } from '../../src/client/retry-after.js';
import { buildChatBody, normalizeBaseUrl } from '../../src/client/request-body.js';
import type { ErrorKind } from '../../src/client/types.js';

describe('isRetryable', () => {
  test('retries connection failures, timeouts and truncated streams; not dns, malformed, aborted or other', () => {
    const expected: Record<Exclude<ErrorKind, 'http_status'>, boolean> = {
      connect_refused: true,
      connect_reset: true,
      dns: false,
      timeout_ttft: true,
      timeout_idle: true,
      timeout_total: true,
      malformed_stream: false,
      truncated_stream: true,
      empty_answer: false,
      aborted: false,
      other: false,
    };
    for (const [kind, retryable] of Object.entries(expected)) {
      assert.equal(isRetryable({ kind: kind as ErrorKind, message: 'x' }), retryable, kind);
    }
  });

  test('retries HTTP 408, 429, 500, 502, 503, 504 only', () => {
    for (const status of [408, 429, 500, 502, 503, 504]) assert.equal(isRetryable({ kind: 'http_status', message: '', status }), true);
    for (const status of [400, 401, 403, 404, 413, 422, 501, 505]) assert.equal(isRetryable({ kind: 'http_status', message: '', status }), false);
    assert.equal(isRetryable({ kind: 'http_status', message: '' }), false);
  });
});

describe('retryDelayMs', () => {
  test('is full jitter over 500 ms * 2^(attempt-1), capped at 30 s', () => {
    assert.equal(retryDelayMs(1, undefined, () => 0.5), 250);
    assert.equal(retryDelayMs(2, undefined, () => 0.5), 500);
    assert.equal(retryDelayMs(3, undefined, () => 0.999), 1998);
    assert.equal(retryDelayMs(10, undefined, () => 0.5), 15_000);
    assert.equal(retryDelayMs(1, undefined, () => 0), 0);
  });

  test('uses Retry-After as a floor', () => {
    assert.equal(retryDelayMs(1, 3_000, () => 0.5), 3_000);
    assert.equal(retryDelayMs(8, 1_000, () => 0.5), 15_000);
    assert.equal(retryDelayMs(1, 60_000, () => 0.9), 60_000);
  });

  test('stays within [floor, max(floor, cap)) for any attempt and draw', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.option(fc.nat(100_000), { nil: undefined }), fc.double({ min: 0, max: 0.9999, noNaN: true }), (attempt, floor, draw) => {
        const delay = retryDelayMs(attempt, floor, () => draw);
        assert.ok(Number.isFinite(delay) && delay >= (floor ?? 0));
        assert.ok(delay <= Math.max(floor ?? 0, 30_000));
      }),
    );
  });
});

describe('parseRetryAfterMs', () => {
  test('reads seconds and HTTP dates, ignores junk', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(parseRetryAfterMs('7', now), 7_000);
    assert.equal(parseRetryAfterMs(' 1.5 ', now), 1_500);
    assert.equal(parseRetryAfterMs('Wed, 01 Jan 2025 00:00:10 GMT', now), 10_000);
    assert.equal(parseRetryAfterMs('Tue, 31 Dec 2024 23:00:00 GMT', now), 0);
    assert.equal(parseRetryAfterMs(['2', '9'], now), 2_000);
    assert.equal(parseRetryAfterMs('soon', now), undefined);
    assert.equal(parseRetryAfterMs('-3', now), undefined);
    assert.equal(parseRetryAfterMs(undefined, now), undefined);
  });
});

describe('request body and base URL', () => {
  test('omits unset fields, adds include_usage only when streaming, merges extraBody last', () => {
    const messages = [{ role: 'user' as const, content: 'q' }];
    assert.deepEqual(buildChatBody({ model: 'm', messages, stream: false }), { model: 'm', messages, stream: false });
    assert.deepEqual(buildChatBody({ model: 'm', messages, stream: true, maxTokens: 5, extraBody: { stream_options: { include_usage: false }, model: 'n' } }), {
      model: 'n', messages, stream: true, max_tokens: 5, stream_options: { include_usage: false },
    });
  });

  test('normalizes base URLs with or without /v1 and a path prefix', () => {
    assert.equal(normalizeBaseUrl('http://h:8000')?.href, 'http://h:8000/');
    assert.equal(normalizeBaseUrl('http://h:8000/v1/')?.href, 'http://h:8000/');
    assert.equal(normalizeBaseUrl('https://h/proxy/v1')?.href, 'https://h/proxy');
    assert.equal(normalizeBaseUrl('ftp://h'), undefined);
    assert.equal(normalizeBaseUrl('nonsense'), undefined);
  });
});
