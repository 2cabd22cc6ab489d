import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StreamResult } from '../../src/client/types.js';
import { buildRecord, type RecordContext } from '../../src/metrics/build-record.js';

/** Counts whitespace-separated words: a stand-in tokenizer whose counts are easy to check by eye. */
const words = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;

interface Calls {
  input: number;
  text: string[];
}

function context(calls: Calls, overrides: Partial<RecordContext> = {}): RecordContext {
  return {
    conversationId: 'CONV_ID_3',
    conversationIndex: 3,
    turn: 2,
    clientId: 1,
    warmup: false,
    retries: 0,
    staleConnectionResends: 0,
    runStartMs: 1000,
    inputNumTurns: 3,
    lastUserMessageTokens: 25,
    expectedCachedTokens: 60,
    expectedCachedTokensInfinite: 60,
    expectedCachedTokensOwnHistory: 50,
    maxTokens: 64,
    countInputTokens: () => {
      calls.input++;
      return 100;
    },
    countTextTokens: (text) => {
      calls.text.push(text);
      return words(text);
    },
    ...overrides,
  };
}

function result(overrides: Partial<StreamResult> = {}): StreamResult {
  return {
    sentAtMs: 1100,
    headersAtMs: 1105,
    firstTokenAtMs: 1120.0004,
    firstContentAtMs: 1120.0004,
    tokenChunkTimesMs: [1120.0004, 1130.5, 1141, 1160],
    doneAtMs: 1170,
    content: 'one two three four five',
    reasoning: '',
    numTokenChunks: 4,
    usage: { promptTokens: 80, completionTokens: 5, cachedTokens: 48 },
    finishReason: 'stop',
    httpStatus: 200,
    ...overrides,
  };
}

describe('buildRecord', () => {
  test('derives every metric from a streamed answer with server usage', () => {
    const calls: Calls = { input: 0, text: [] };
    const r = buildRecord(context(calls), { ...result(), firstTokenChunkText: 'one two' } as StreamResult);
    assert.equal(r.ttft_ms, 20);
    assert.equal(r.e2el_ms, 70);
    assert.equal(r.latency_ms, 70);
    assert.equal(r.tpot_ms, 12.5); // (70 - 20) / (5 - 1)
    assert.deepEqual(r.itl_ms, [10.5, 10.5, 19]);
    assert.equal(r.sent_at_ms, 100);
    assert.equal(r.first_token_at_ms, 120);
    assert.equal(r.done_at_ms, 170);
    assert.equal(r.start_time_ms, Math.round((performance.timeOrigin + 1100) * 1000) / 1000);
    assert.equal(r.input_num_tokens, 80);
    assert.equal(r.input_tokens_source, 'server');
    assert.equal(r.output_num_tokens, 5);
    assert.equal(r.output_tokens_source, 'server');
    assert.equal(r.cached_tokens, 48);
    assert.equal(r.expected_cached_tokens, 60);
    assert.equal(r.approx_cached_percent, (100 * (80 - 25)) / 80);
    assert.equal(r.output_num_chunks, 4);
    assert.equal(r.output_num_first_chunk_tokens, 2);
    assert.equal(r.ttft_content_ms, 20);
    assert.equal(r.ttft_reasoning_ms, null);
    assert.equal(r.status, 'ok');
    assert.equal(r.error_kind, null);
    assert.equal(r.http_status, 200);
    assert.equal(r.finish_reason, 'stop');
    assert.equal(r.max_tokens, 64);
    assert.deepEqual(
      [r.conversation_id, r.conversation_index, r.turn, r.client_id, r.warmup, r.retries, r.input_num_turns],
      ['CONV_ID_3', 3, 2, 1, false, 0, 3],
    );
    // With usage the prompt is never tokenized, and output text only for the first chunk.
    assert.equal(calls.input, 0);
    assert.deepEqual(calls.text, ['one two']);
  });

  test('counts locally without usage, content and reasoning separately', () => {
    const calls: Calls = { input: 0, text: [] };
    const r = buildRecord(
      context(calls),
      result({ usage: undefined, reasoning: 'think think', firstReasoningAtMs: 1110, firstTokenAtMs: 1110 }),
    );
    assert.equal(r.input_num_tokens, 100);
    assert.equal(r.input_tokens_source, 'local');
    assert.equal(r.output_num_tokens, 7);
    assert.equal(r.output_tokens_source, 'local');
    assert.equal(r.cached_tokens, null);
    assert.equal(r.ttft_ms, 10); // the reasoning token came first
    assert.equal(r.ttft_reasoning_ms, 10);
    assert.equal(r.ttft_content_ms, 20);
    assert.equal(r.tpot_ms, 10); // (70 - 10) / (7 - 1)
    assert.equal(r.output_num_first_chunk_tokens, 0); // no firstTokenChunkText given
    assert.equal(calls.input, 1);
    assert.deepEqual(calls.text, ['one two three four five', 'think think']);
  });

  test('reasoning-only answer: ttft is the first reasoning token', () => {
    const calls: Calls = { input: 0, text: [] };
    const r = buildRecord(
      context(calls),
      result({ content: '', reasoning: 'a b c', firstContentAtMs: undefined, firstReasoningAtMs: 1105, firstTokenAtMs: 1105 }),
    );
    assert.equal(r.ttft_ms, 5);
    assert.equal(r.ttft_content_ms, null);
    assert.equal(r.ttft_reasoning_ms, 5);
  });

  test('one output token: tpot is null', () => {
    const calls: Calls = { input: 0, text: [] };
    const r = buildRecord(
      context(calls),
      result({ tokenChunkTimesMs: [1120], numTokenChunks: 1, usage: { promptTokens: 10, completionTokens: 1 } }),
    );
    assert.equal(r.tpot_ms, null);
    assert.deepEqual(r.itl_ms, []);
    assert.equal(r.cached_tokens, null);
  });

  test('failed before any token keeps what was measured', () => {
    const calls: Calls = { input: 0, text: [] };
    const r = buildRecord(
      context(calls),
      result({
        firstTokenAtMs: undefined,
        firstContentAtMs: undefined,
        tokenChunkTimesMs: [],
        numTokenChunks: 0,
        content: '',
        usage: undefined,
        finishReason: undefined,
        httpStatus: 503,
        doneAtMs: 1150,
        error: { kind: 'http_status', message: 'HTTP 503', status: 503, bodyExcerpt: 'overloaded' },
      }),
    );
    assert.equal(r.status, 'error');
    assert.equal(r.error_kind, 'http_status');
    assert.equal(r.error, 'HTTP 503');
    assert.equal(r.http_status, 503);
    assert.equal(r.ttft_ms, null);
    assert.equal(r.first_token_at_ms, null);
    assert.equal(r.tpot_ms, null);
    assert.equal(r.e2el_ms, 50);
    assert.equal(r.output_num_tokens, 0);
    assert.equal(r.input_num_tokens, 100);
    assert.equal(r.finish_reason, null);
    assert.deepEqual(calls.text, [], 'no text to count');
  });

  test('failed mid-stream keeps ttft and itl', () => {
    const calls: Calls = { input: 0, text: [] };
    const r = buildRecord(
      context(calls),
      result({ usage: undefined, error: { kind: 'timeout_idle', message: 'idle 30 s' }, tokenChunkTimesMs: [1120, 1130] }),
    );
    assert.equal(r.status, 'error');
    assert.equal(r.error_kind, 'timeout_idle');
    assert.equal(r.ttft_ms, 20);
    assert.deepEqual(r.itl_ms, [10]);
    assert.equal(r.output_tokens_source, 'local');
  });

  test('approx_cached_percent is 0 for an empty prompt and never negative', () => {
    const calls: Calls = { input: 0, text: [] };
    const empty = buildRecord(context(calls, { countInputTokens: () => 0 }), result({ usage: undefined }));
    assert.equal(empty.approx_cached_percent, 0);
    const small = buildRecord(context(calls, { lastUserMessageTokens: 500 }), result());
    assert.equal(small.approx_cached_percent, 0);
  });

  test('the first chunk never counts more tokens than the whole answer (a non-streamed body is all first chunk)', () => {
    const calls: Calls = { input: 0, text: [] };
    // The local count of the body's ten words against the server's 5 completion tokens.
    const text = 'one two three four five six seven eight nine ten';
    const r = buildRecord(context(calls), result({ content: text, firstTokenChunkText: text, numTokenChunks: 0, tokenChunkTimesMs: [1170] }));
    assert.equal(r.output_num_tokens, 5);
    assert.equal(r.output_num_first_chunk_tokens, 5);
    assert.equal(r.output_num_chunks, 0);
  });

  test('rounds derived milliseconds to 3 decimals', () => {
    const calls: Calls = { input: 0, text: [] };
    const r = buildRecord(
      context(calls),
      result({ sentAtMs: 1100.00001, firstTokenAtMs: 1120.123456, doneAtMs: 1170.987654, tokenChunkTimesMs: [1120.123456, 1121.1239] }),
    );
    assert.equal(r.ttft_ms, 20.123);
    assert.equal(r.e2el_ms, 70.988);
    assert.deepEqual(r.itl_ms, [1]);
    for (const v of [r.ttft_ms!, r.e2el_ms, r.tpot_ms!, r.sent_at_ms, r.done_at_ms]) {
      assert.equal(Math.round(v * 1000) / 1000, v);
    }
  });
});
