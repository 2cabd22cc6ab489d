import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import { summarize } from '../../src/metrics/summary.js';
import { formatComparison } from '../../src/report/compare.js';
import { formatRepeatIntervals, repeatIntervals } from '../../src/report/repeats.js';
import { cutText, wrapLine } from '../../src/report/table-fit.js';
import { formatSummary } from '../../src/report/terminal.js';
import { terminalWidth } from '../../src/report/terminal-width.js';
import { displayWidth, textTable } from '../../src/report/text-table.js';
import { loadRunData } from '../../src/store/run-data.js';
import { syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

// Issue #34, "the terminal fits": every line within the width given; columns dropped by a stated order, never wrapped.

const WIDTHS = [60, 80, 120];

function assertFits(text: string, width: number): void {
  for (const line of text.split('\n')) assert.ok(displayWidth(line) <= width, `${displayWidth(line)} > ${width}: ${line}`);
}

/** The header cells of the first box table in `text` after the line `after` (or the first table). */
function headerCells(text: string, after = ''): string[] {
  const lines = text.split('\n');
  const from = after === '' ? 0 : lines.findIndex((l) => l.startsWith(after));
  const header = lines.slice(from).find((l) => l.startsWith('│'))!;
  return header.split('│').slice(1, -1).map((c) => c.trim());
}

/** A summary like a real run's: failures, a cache, four turns, and the prefix-cache line's long header rows. */
function summaryText(width: number | undefined, color = false): string {
  const records = syntheticRecords();
  return formatSummary(
    { summary: summarize(records), perTurn: summarizePerTurn(records), clientHealth: null, conversations: { completed: 3, unfinished: 1 }, title: 'chatload run: demo (max_requests)' },
    { color, width },
  );
}

describe('formatSummary fitted to a width', () => {
  test('at 60, 80 and 120 columns no line is longer than the width, with and without colour', () => {
    for (const width of WIDTHS) {
      assertFits(summaryText(width), width);
      assertFits(summaryText(width, true), width);
    }
  });

  test('columns go in the stated order (p25 and p75 first), metric, p50 and p99 always stay, and a line names what went', () => {
    const full = headerCells(summaryText(undefined));
    assert.deepEqual(full, ['metric', 'count', 'mean', 'std', 'min', 'p25', 'p50', 'p75', 'p90', 'p99', 'p99.9', 'max']);
    for (const width of WIDTHS) {
      const text = summaryText(width);
      const kept = headerCells(text);
      for (const column of ['metric', 'p50', 'p99']) assert.ok(kept.includes(column), `${column} at ${width}`);
      const dropped = full.filter((c) => !kept.includes(c));
      const order = ['p25', 'p75', 'std', 'min', 'p99.9', 'count', 'p90', 'max', 'mean'];
      assert.deepEqual(dropped, order.slice(0, dropped.length).sort((a, b) => full.indexOf(a) - full.indexOf(b)), `the first ${dropped.length} of the order at ${width}`);
      if (dropped.length > 0) assert.match(text, new RegExp(`^hidden to fit ${width} columns: ${dropped[0]!.replace('.', '\\.')}`, 'm'));
    }
    assert.ok(headerCells(summaryText(60)).length < headerCells(summaryText(120)).length, 'a narrower terminal shows fewer columns');
  });

  test('the per-turn table keeps turn and TTFT p50/p99; long header rows break at " | " under their value', () => {
    const text = summaryText(60);
    const perTurn = headerCells(text, 'per turn');
    for (const column of ['turn', 'ttft p50', 'ttft p99']) assert.ok(perTurn.includes(column), column);
    assert.ok(!perTurn.includes('expected mean'), 'the first to go');
    const lines = text.split('\n');
    const cache = lines.findIndex((l) => l.startsWith('  cache '));
    assert.match(lines[cache + 1]!, /^ {17}\S/, 'a continuation line starts under the value');
    // Without a width: the tables whole, as before.
    assert.doesNotMatch(summaryText(undefined), /hidden to fit/);
  });
});

describe('the other tables fit too', () => {
  test('--repeat intervals: each run\'s column goes before the interval', () => {
    const summaries = [1, 1.1, 1.2, 1.3, 1.4].map((scale) => summarize(syntheticRecords({ latencyScale: scale })));
    const intervals = repeatIntervals(summaries);
    for (const width of WIDTHS) assertFits(formatRepeatIntervals(intervals, 5, width), width);
    const narrow = headerCells(formatRepeatIntervals(intervals, 5, 60));
    for (const column of ['metric', 'mean', '± 95% CI']) assert.ok(narrow.includes(column), column);
    assert.ok(!narrow.includes('#5'), 'the last run\'s value goes first');
  });

  test('compare: the unit, then the changes go; a long run folder name is cut in the notes', async () => {
    const root = tempDir('compare-fit');
    try {
      const dirs = ['baseline', 'slower-with-a-rather-long-folder-name', 'third'].map((name, i) => {
        const dir = join(root, name);
        mkdirSync(dir);
        writeRunDir(dir, syntheticRecords({ latencyScale: 1 + i }));
        return dir;
      });
      const runs = await Promise.all(dirs.map((dir) => loadRunData(dir)));
      for (const width of WIDTHS) assertFits(formatComparison(runs, { color: true, width }), width);
      const narrow = headerCells(formatComparison(runs, { color: false, width: 60 }));
      assert.equal(narrow[0], 'metric');
      assert.ok(!narrow.includes('unit'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('textTable: labels cut with …, and a width too narrow for any table still cuts each line', () => {
    const rows = [['a_very_long_metric_name_indeed', '1.00', '2.00']];
    const text = textTable(rows, { head: ['metric', 'p50', 'p99'], fit: { width: 24 } });
    assertFits(text, 24);
    assert.match(text, /│ a_ver… │/);
    assertFits(textTable(rows, { head: ['metric', 'p50', 'p99'], fit: { width: 12 } }), 12);
    assert.equal(cutText('abcdef', 4), 'abc…');
    assert.deepEqual(wrapLine('one | two | three', 12, 2), ['one | two', '  three']);
  });

  test('terminalWidth: a terminal\'s columns, else COLUMNS, else none', () => {
    assert.equal(terminalWidth({ isTTY: true, columns: 77 }, {}), 77);
    assert.equal(terminalWidth({ isTTY: false }, { COLUMNS: '64' }), 64);
    assert.equal(terminalWidth({ isTTY: false }, { COLUMNS: 'wide' }), undefined);
    assert.equal(terminalWidth({}, {}), undefined);
  });
});
