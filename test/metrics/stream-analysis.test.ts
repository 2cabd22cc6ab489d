import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { analyzeRecords } from '../../src/metrics/run-analysis.js';
import { analyzeRecordsFile } from '../../src/store/records-file-analysis.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { Stats } from '../../src/metrics/stats.js';
import { summarize, type Summary } from '../../src/metrics/summary.js';
import { normalizeRunOptions } from '../../src/options/run-options.js';
import { writeJsonAtomic } from '../../src/store/atomic-write.js';
import { RequestsJsonlSink } from '../../src/store/requests-jsonl.js';
import { toReferenceStats, writeReferenceStatsFile } from '../../src/report/stats-json.js';
import { Rng } from '../../src/util/rng.js';
import { assertStatsClose } from '../helpers/stats-close.js';
import { tempDir } from '../helpers/tmp.js';
import { makeFailed, makeRecord } from './record-fixtures.js';

/** A run's worth of varied records: warmup, failures, 6 turns, cached or not, scheduled or not, many equal send times. */
function runRecords(count: number): RequestRecord[] {
  const rng = new Rng(11);
  return Array.from({ length: count }, (_, i) => {
    const base = {
      conversation_id: `c${i % 97}`,
      turn: 1 + (i % 6),
      warmup: i < 40,
      // Send times repeat in runs of 7, so the warmup-percentage cuts fall inside groups of equal times.
      sent_at_ms: Math.floor(i / 7) * 3.5,
      done_at_ms: Math.floor(i / 7) * 3.5 + 500 + rng.int(0, 2000),
      input_num_tokens: rng.int(20, 9000),
    };
    if (i % 23 === 5) return makeFailed('http_status', base);
    const ttft = 20 + rng.next() * 400;
    const scheduled = i % 3 === 0;
    return makeRecord({
      ...base,
      ttft_ms: Math.round(ttft * 1000) / 1000,
      tpot_ms: Math.round((5 + rng.next() * 30) * 1000) / 1000,
      itl_ms: Array.from({ length: rng.int(1, 40) }, () => Math.round((3 + rng.next() * 60) * 1000) / 1000),
      e2el_ms: Math.round((ttft + rng.next() * 3000) * 1000) / 1000,
      output_num_tokens: rng.int(1, 500),
      cached_tokens: i % 4 === 0 ? null : rng.int(0, 4000),
      expected_cached_tokens: rng.int(0, 4000),
      schedule_lag_ms: scheduled ? Math.round(rng.next() * 20 * 1000) / 1000 : null,
      queue_ms: scheduled ? Math.round(rng.next() * 5 * 1000) / 1000 : 0,
      ttft_from_scheduled_ms: scheduled ? Math.round((ttft + 10) * 1000) / 1000 : null,
      e2el_from_scheduled_ms: scheduled ? Math.round((ttft + 900) * 1000) / 1000 : null,
    });
  });
}

function assertSummaryClose(actual: Summary, expected: Summary, label: string): void {
  const { metrics: am, ttft_by_context: ac, approximate_metrics: aa, ...aCounts } = actual;
  const { metrics: em, ttft_by_context: ec, ...eCounts } = expected;
  delete (eCounts as Partial<Summary>).approximate_metrics;
  assert.deepEqual(aCounts, eCounts, `${label}: every count, total, ratio, throughput and goodput is exact`);
  for (const key of Object.keys(em) as Array<keyof typeof em>) {
    if (em[key] === null) assert.equal(am[key], null, `${label}.${key}`);
    else assertStatsClose(am[key], em[key], `${label}.${key}`);
  }
  assert.deepEqual(ac.map((b) => [b.label, b.count]), ec.map((b) => [b.label, b.count]));
  assert.ok(aa.includes('ttft_ms') && aa.includes('input_num_tokens'));
}

describe('a run\'s analysis past its exact-record limit (streamed, statistics from histograms)', () => {
  const dir = tempDir('stream-analysis');
  after(() => rmSync(dir, { recursive: true, force: true }));
  const records = runRecords(3000);
  const path = join(dir, 'requests.jsonl');
  const sink = RequestsJsonlSink.open(path);
  for (const r of records) sink.write(r);
  sink.close();
  const options = normalizeRunOptions({ goodput: ['ttft:200', 'e2el:2500'], warmupPercentages: [0, 10, 37.5, 99.99] });
  const exact = analyzeRecords(records, options);

  test('below the limit it is the exact analysis', { timeout: 30_000 }, async () => {
    const analysis = await analyzeRecordsFile(path, options, { exactRecords: 3000 });
    assert.equal(analysis.mode, 'exact');
    assert.deepEqual(analysis.warnings, []);
    assert.deepEqual({ ...analysis, mode: undefined, warnings: undefined }, { ...exact, mode: undefined, warnings: undefined });
  });

  test('above it: counts exact, every Stats within 0.1%, warmup cuts exact even among equal send times', { timeout: 30_000 }, async () => {
    const analysis = await analyzeRecordsFile(path, options, { exactRecords: 500 });
    assert.equal(analysis.mode, 'histogram');
    assert.match(analysis.warnings[0]!, /3000 records exceed the 500/);
    assertSummaryClose(analysis.summary, exact.summary, 'summary');
    assert.deepEqual(Object.keys(analysis.warmupPercentages), Object.keys(exact.warmupPercentages));
    for (const key of Object.keys(exact.warmupPercentages)) assertSummaryClose(analysis.warmupPercentages[key]!, exact.warmupPercentages[key]!, key);
    assert.ok(exact.warmupPercentages['37.5%']!.warmup_excluded > 40, 'the cut dropped records');
    // Both paths cut with the same code, so check the cuts against the reference's own definition too: the non-warmup
    // records stably sorted by send time (ties in file order), the first floor(X% of n) dropped. A cut inside a run of
    // equal send times changes the token totals when it drops the wrong tied records.
    const measured = records.filter((r) => !r.warmup);
    const ordered = [...measured].sort((a, b) => a.sent_at_ms - b.sent_at_ms);
    const cutsAmongTies = [10, 37.5].filter((percent) => {
      const dropped = Math.floor((percent / 100) * measured.length);
      return ordered[dropped - 1]!.sent_at_ms === ordered[dropped]!.sent_at_ms;
    });
    assert.ok(cutsAmongTies.length > 0, 'a cut falls among equal send times');
    for (const percent of [10, 37.5]) {
      const dropped = Math.floor((percent / 100) * measured.length);
      const reference = { ...summarize(ordered.slice(dropped), { slos: options.goodput! }), warmup_excluded: 40 + dropped };
      assert.deepEqual(exact.warmupPercentages[`${percent}%`], reference, `${percent}%: exact`);
      assertSummaryClose(analysis.warmupPercentages[`${percent}%`]!, reference, `${percent}%: from histograms`);
    }

    assert.equal(analysis.perTurn.length, exact.perTurn.length);
    analysis.perTurn.forEach((turn, i) => {
      const e = exact.perTurn[i]!;
      assert.deepEqual([turn.turn, turn.completed, turn.failed, turn.cache_hit_ratio, turn.goodput_share], [e.turn, e.completed, e.failed, e.cache_hit_ratio, e.goodput_share]);
      for (const key of ['ttft_ms', 'tpot_ms', 'e2el_ms', 'input_num_tokens', 'cached_tokens', 'expected_cached_tokens'] as const) {
        assertStatsClose(turn[key] as Stats, e[key] as Stats, `turn ${turn.turn} ${key}`);
      }
    });
    assert.deepEqual(analysis.perConversation, exact.perConversation, 'per-conversation figures are exact');
    assert.deepEqual(analysis.conversationStats, exact.conversationStats);
    assert.deepEqual(analysis.histograms, exact.histograms, 'the same histograms either way');
  });

  test('--stats-json-output streamed is byte-for-byte the file written from all records', { timeout: 30_000 }, async () => {
    const streamed = join(dir, 'stats-streamed.json');
    const whole = join(dir, 'stats-whole.json');
    await writeReferenceStatsFile(streamed, path);
    writeJsonAtomic(whole, toReferenceStats(records));
    assert.equal(readFileSync(streamed, 'utf8'), readFileSync(whole, 'utf8'));
    const empty = join(dir, 'empty.jsonl');
    RequestsJsonlSink.open(empty).close();
    await writeReferenceStatsFile(join(dir, 'stats-empty.json'), empty);
    writeJsonAtomic(join(dir, 'stats-empty-whole.json'), []);
    assert.equal(readFileSync(join(dir, 'stats-empty.json'), 'utf8'), readFileSync(join(dir, 'stats-empty-whole.json'), 'utf8'));
  });
});
