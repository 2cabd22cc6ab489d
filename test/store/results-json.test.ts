import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import { summarize, summarizeWarmupPercentages } from '../../src/metrics/summary.js';
import type { ConversationCounts } from '../../src/metrics/conversation-counts.js';
import { buildResultsDocument, writeJsonAtomic, type ResultsConfig, type ResultsDocument, type ResultsExtra } from '../../src/store/results-json.js';
import { RESULTS_SCHEMA_VERSION } from '../../src/store/schema-version.js';
import { makeFailed, makeRecord } from '../metrics/record-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'chatload-results-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('buildResultsDocument', () => {
  const records = [
    makeRecord({ ttft_ms: 10, tpot_ms: 2, itl_ms: [1, 3], e2el_ms: 20, sent_at_ms: 0, done_at_ms: 1000 }),
    makeRecord({ ttft_ms: 30, tpot_ms: 4, itl_ms: [5], e2el_ms: 40, sent_at_ms: 500, done_at_ms: 2000 }),
    makeFailed('http_status', { sent_at_ms: 600, done_at_ms: 700 }),
  ];
  const summary = summarize(records);
  // Keys no run writes, to see redaction and precedence at work: the document is read as any JSON object.
  const doc = buildResultsDocument({
    config: { model: 'm', api_key: 'sk-1', header: ['Authorization: Bearer x'], max_tokens: 64 } as ResultsConfig,
    summary,
    warmupPercentages: summarizeWarmupPercentages(records, [0, 50]),
    perTurn: summarizePerTurn(records),
    clientHealth: null,
    conversations: { completed: 1, unfinished: 0, not_started: 2 } as ConversationCounts,
    extra: { completed: -1, stop_reason: 'done', token: 'secret' } as unknown as ResultsExtra,
    createdAt: new Date('2025-01-02T03:04:05Z'),
  }) as ResultsDocument & Record<string, unknown> & { config: Record<string, unknown> };

  test('sections and environment', () => {
    assert.match(doc.chatload_version, /^\d+\.\d+\.\d+/);
    assert.equal(doc.schema_version, RESULTS_SCHEMA_VERSION);
    assert.equal(doc.created_at, '2025-01-02T03:04:05.000Z');
    assert.equal(doc.environment.node, process.version);
    assert.ok(doc.environment.cpus >= 1);
    assert.ok(!('hostname' in doc.environment));
    assert.equal(doc.summary, summary);
    assert.deepEqual(Object.keys(doc.warmup_percentages), ['0%', '50%']);
    assert.equal(doc.per_turn.length, 1);
    assert.equal(doc.client_health, null);
    assert.deepEqual(doc.conversations, { completed: 1, unfinished: 0, not_started: 2 });
  });

  test('config and extra are redacted; extra cannot replace core keys', () => {
    assert.equal(doc.config.api_key, '[redacted]');
    assert.deepEqual(doc.config.header, ['Authorization: [redacted]']);
    assert.equal(doc.config.max_tokens, 64);
    assert.equal(doc.stop_reason, 'done');
    assert.equal((doc as unknown as Record<string, unknown>).token, '[redacted]');
    assert.equal((doc as unknown as Record<string, unknown>).completed, 2);
  });

  test('flat vllm keys', () => {
    assert.equal(doc.failed, 1);
    assert.equal(doc.duration, 2);
    assert.equal(doc.request_throughput, 1);
    assert.equal(doc.total_input_tokens, summary.total_input_tokens);
    assert.equal(doc.total_output_tokens, summary.total_output_tokens);
    assert.equal(doc.output_throughput, summary.output_throughput);
    assert.equal(doc.total_token_throughput, summary.total_token_throughput);
    assert.equal(doc.mean_ttft_ms, 20);
    assert.equal(doc.median_ttft_ms, 20);
    assert.ok(Math.abs(doc.std_ttft_ms! - 10) < 1e-9, 'population std, as np.std');
    assert.equal(doc.p99_ttft_ms, 29.8);
    assert.equal(doc['p99.9_ttft_ms'], 29.980000000000004); // numpy gives exactly this
    assert.equal(doc.mean_itl_ms, 3);
    assert.equal(doc.median_tpot_ms, 3);
    assert.equal(doc.p90_e2el_ms, 38);
    for (const metric of ['ttft', 'tpot', 'itl', 'e2el']) {
      for (const key of ['mean', 'median', 'std', 'p25', 'p50', 'p75', 'p90', 'p99', 'p99.9']) {
        assert.equal(typeof doc[`${key}_${metric}_ms`], 'number', `${key}_${metric}_ms`);
      }
    }
  });

  test('null flat keys when there is no data', () => {
    const empty = buildResultsDocument({
      config: {},
      summary: summarize([]),
      warmupPercentages: {},
      perTurn: [],
      clientHealth: null,
      conversations: null,
      extra: {} as ResultsExtra,
    });
    assert.equal(empty.mean_ttft_ms, null);
    assert.equal(empty.completed, 0);
    assert.ok(!Number.isNaN(Date.parse(empty.created_at)));
    // The whole document survives JSON.
    assert.deepEqual(JSON.parse(JSON.stringify(empty)), empty);
  });
});

describe('writeJsonAtomic', () => {
  test('writes pretty JSON, replaces the old file, leaves no temporary file', () => {
    const path = join(dir, 'out', 'results.json');
    writeJsonAtomic(path, { a: 1 });
    assert.equal(readFileSync(path, 'utf8'), '{\n  "a": 1\n}\n');
    writeJsonAtomic(path, { b: [1, 2] });
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), { b: [1, 2] });
    assert.deepEqual(readdirSync(join(dir, 'out')), ['results.json']);
  });

  test('a failed write leaves the old file intact and no temporary file', () => {
    const path = join(dir, 'keep.json');
    writeFileSync(path, '{"old":true}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => writeJsonAtomic(path, cyclic), TypeError);
    assert.equal(readFileSync(path, 'utf8'), '{"old":true}');
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('keep')),
      ['keep.json'],
    );
  });
});
