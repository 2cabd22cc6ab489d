import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assessClientHealth } from '../../src/metrics/client-health.js';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import { RunAggregate } from '../../src/metrics/run-aggregate.js';
import { summarize } from '../../src/metrics/summary.js';
import { formatSummary } from '../../src/report/terminal.js';
import { makeFailed, makeRecord } from '../metrics/record-fixtures.js';

const health = assessClientHealth({
  event_loop_delay_ms: { p50: 0.5, p99: 30, max: 50, mean: 1 },
  cpu_user_ms: 100,
  cpu_system_ms: 10,
  cpu_percent_of_one_core: 11,
  wall_ms: 1000,
  max_rss_mb: 80,
});

function records(turns: number, perTurn: number) {
  const out = [];
  for (let t = 1; t <= turns; t++) {
    for (let i = 0; i < perTurn; i++) {
      out.push(makeRecord({ turn: t, ttft_ms: 10 + i, sent_at_ms: t * 10, done_at_ms: t * 10 + 50, cached_tokens: 50 }));
    }
  }
  return out;
}

describe('formatSummary', () => {
  test('without color: no ANSI codes, every section present', () => {
    const recs = [...records(3, 4), makeFailed('http_status', { turn: 2 }), makeFailed('timeout_ttft', { turn: 3 })];
    const text = formatSummary(
      {
        summary: summarize(recs),
        perTurn: summarizePerTurn(recs),
        clientHealth: health,
        conversations: { completed: 3, unfinished: 1 },
        title: 'run 1',
      },
      { color: false },
    );
    assert.ok(!text.includes('\x1b'), 'no escape character');
    assert.match(text, /^run 1\n/);
    assert.match(text, /completed 12, failed 2 \(http_status 1, timeout_ttft 1\)/);
    assert.match(text, /hit ratio 50\.0%/);
    assert.match(text, /conversations {2}completed 3, unfinished 1/);
    for (const row of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms', 'input_num_tokens', 'output_num_tokens', 'cached_tokens']) {
      assert.match(text, new RegExp(`│ ${row} `), row);
    }
    assert.match(text, /p99\.9/);
    assert.match(text, /per turn/);
    assert.match(text, /event-loop delay p50 0\.50 ms/);
    assert.match(text, /warning: client event-loop delay p99 was 30\.0 ms/);
    assert.doesNotMatch(text, /from histograms/, 'an exact summary says nothing about histograms');
  });

  test('the replicas table shows from two replicas: one (the embedded simulator names its index too) has nothing to compare', () => {
    const row = (replica: string) => ({ replica, requests: 10, input_tokens: 1000, cached_tokens: 500, expected_cached_tokens: 500, hit_ratio: 0.5, efficiency: 1, source: 'header' as const });
    const summary = summarize(records(1, 20));
    const one = formatSummary({ summary, perTurn: [], clientHealth: null, replicas: [row('0')] }, { color: false });
    assert.doesNotMatch(one, /^replicas/m);
    const two = formatSummary({ summary, perTurn: [], clientHealth: null, replicas: [row('0'), row('1')] }, { color: false });
    assert.match(two, /^replicas \(from each response's replica header\)/m);
  });

  test('a summary whose statistics came from histograms says which', () => {
    const recs = records(2, 30);
    const text = formatSummary({ summary: RunAggregate.fromRecords(recs, { exactRecords: 0 }).summary(), perTurn: [], clientHealth: null }, { color: false });
    assert.match(text, /percentiles {4}from histograms, within 0\.1%: ttft, ttft_content, tpot, itl, e2el, input_num_tokens/);
  });

  test('p99 needs 100 samples and p99.9 needs 1000, as the reference', () => {
    const few = formatSummary({ summary: summarize(records(1, 99)), perTurn: [], clientHealth: null }, { color: false });
    const ttftFew = few.split('\n').find((l) => l.includes('ttft_ms'))!;
    assert.equal(ttftFew.split('│').map((c) => c.trim())[10], '-');
    const many = formatSummary({ summary: summarize(records(1, 100)), perTurn: [], clientHealth: null }, { color: false });
    const cells = many.split('\n').find((l) => l.includes('ttft_ms'))!.split('│').map((c) => c.trim());
    assert.equal(cells[10], '108.01'); // p99 of 10..109
    assert.equal(cells[11], '-');
  });

  test('more than 40 turns: first 20, an ellipsis row, last 20', () => {
    const recs = records(45, 1);
    const text = formatSummary({ summary: summarize(recs), perTurn: summarizePerTurn(recs), clientHealth: null }, { color: false });
    const perTurn = text.slice(text.indexOf('per turn'));
    const turnCells = perTurn
      .split('\n')
      .map((l) => l.split('│').map((c) => c.trim())[1])
      .filter((c): c is string => c !== undefined && c !== '' && c !== 'turn');
    assert.equal(turnCells.length, 41);
    assert.equal(turnCells[0], '1');
    assert.equal(turnCells[19], '20');
    assert.equal(turnCells[20], '…');
    assert.equal(turnCells[21], '26');
    assert.equal(turnCells[40], '45');
  });

  test('with color: ANSI codes appear', () => {
    const recs = [makeFailed('dns')];
    const text = formatSummary({ summary: summarize(recs), perTurn: [], clientHealth: health }, { color: true });
    assert.ok(text.includes('\x1b['));
  });
});
