import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { readCsvTrace } from '../../src/conversation/csv-trace-file.js';
import { loadDataset } from '../../src/conversation/load.js';
import { formatWallClock, nsBetween, parseWallClock } from '../../src/conversation/wall-clock.js';
import { DatasetError } from '../../src/errors/index.js';
import { parseTraceFilter, type TraceFilter } from '../../src/options/values/trace-filter.js';
import { csvTraceStats } from '../../src/synth/trace-stats.js';
import { FIXTURES } from '../helpers/tokenizers.js';
import { tempDir } from '../helpers/tmp.js';

const AZURE_2023 = join(FIXTURES, 'azure-2023-sample.csv');
const AZURE_2024 = join(FIXTURES, 'azure-2024-sample.csv');
const BURSTGPT = join(FIXTURES, 'burstgpt-sample.csv');

function write(name: string, text: string): string {
  const file = join(tempDir('trace-csv'), name);
  writeFileSync(file, text);
  return file;
}

async function loadError(file: string, options: Parameters<typeof loadDataset>[1] = {}): Promise<string> {
  try {
    await loadDataset(file, options);
  } catch (error) {
    assert.ok(error instanceof DatasetError, String(error));
    return error.message;
  }
  assert.fail('expected a DatasetError');
}

function filter(text: string): TraceFilter {
  const parsed = parseTraceFilter(text);
  assert.ok(typeof parsed !== 'string', String(parsed));
  return parsed;
}

describe('Azure wall-clock timestamps', () => {
  test('7 fractional digits are read exactly, relative to another time (no millisecond rounding)', () => {
    const a = parseWallClock('2023-11-16 18:15:46.6805900')!;
    const b = parseWallClock('2023-11-16 18:15:46.6805901')!;
    assert.equal(nsBetween(a, b), 100);
    // Across midnight and with a zone: 2024's style.
    const c = parseWallClock('2024-05-10 23:59:59.999999+00:00')!;
    const d = parseWallClock('2024-05-11 00:00:00.000001+00:00')!;
    assert.equal(nsBetween(c, d), 2000);
    assert.equal(nsBetween(parseWallClock('2024-05-10 02:00:00+02:00')!, parseWallClock('2024-05-10 00:00:00Z')!), 0);
  });

  test('a time is written back in its own style, exactly', () => {
    const origin = parseWallClock('2023-11-16 23:59:59.9999999')!;
    assert.equal(formatWallClock(origin, 0, origin.style), '2023-11-16 23:59:59.9999999');
    assert.equal(formatWallClock(origin, 100, origin.style), '2023-11-17 00:00:00.0000000');
    const z = parseWallClock('2024-05-10 00:00:00.009930+00:00')!;
    assert.equal(formatWallClock(z, 1_500_000_000, z.style), '2024-05-10 00:00:01.509930+00:00');
  });

  test('what is no time is refused', () => {
    for (const bad of ['2023-13-01 00:00:00', '2023-11-16', '1700000000', '2023-11-16 18:15:46.1234567890']) assert.equal(parseWallClock(bad), undefined, bad);
  });
});

describe('CSV traces', () => {
  test('an Azure 2023 file is detected by its header; each row is a request of its own at its time from the first row', async () => {
    const loaded = await loadDataset(AZURE_2023);
    assert.equal(loaded.format, 'azure');
    assert.equal(loaded.conversations.length, 24);
    const first = loaded.conversations[0]!.trace!;
    assert.equal(first.context, 'self-contained');
    assert.deepEqual({ atMs: first.turns[0]!.atMs, inputLength: first.turns[0]!.inputLength, outputLength: first.turns[0]!.outputLength }, { atMs: 0, inputLength: 713, outputLength: 5 });
    // 18:15:46.8410560 - 18:15:46.6805900, exactly.
    assert.ok(Math.abs(loaded.conversations[1]!.trace!.turns[0]!.atMs! - 160.466) < 1e-9);
    // No block is shared: every prompt is made of ids of its own.
    const ids = loaded.conversations.flatMap((c) => c.trace!.turns[0]!.hashIds);
    assert.equal(new Set(ids).size, ids.length);
  });

  test('the 2024 release (6 digits, +00:00, across midnight) and BurstGPT are detected too', async () => {
    const azure = await loadDataset(AZURE_2024);
    assert.equal(azure.format, 'azure');
    const last = azure.conversations.at(-1)!.trace!.turns[0]!;
    // 2024-05-11 00:00:05.135604 - 2024-05-10 23:59:57.009930
    assert.ok(Math.abs(last.atMs! - 8125.674) < 1e-9, String(last.atMs));
    const burst = await loadDataset(BURSTGPT);
    assert.equal(burst.format, 'burstgpt');
    assert.deepEqual(burst.csvTrace, { rows: 30, failedSkipped: 3, filteredOut: 0, outsideWindow: 0 });
    assert.equal(burst.conversations.length, 27);
  });

  test('columns are read by their header names, in any order; forced with --input-format, a headerless file is read in the documented order', async () => {
    const shuffled = write('shuffled.csv', 'GeneratedTokens,TIMESTAMP,ContextTokens\n7,2023-11-16 18:15:46.0000000,100\n');
    const turn = (await loadDataset(shuffled)).conversations[0]!.trace!.turns[0]!;
    assert.deepEqual([turn.inputLength, turn.outputLength], [100, 7]);
    const headerless = write('headerless.txt', '0,ChatGPT,10,3,13,API log\n2,GPT-4,20,4,24,API log\n');
    const loaded = await loadDataset(headerless, { trace: { format: 'burstgpt' } });
    assert.deepEqual(loaded.conversations.map((c) => c.trace!.turns[0]!.atMs), [0, 2000]);
  });

  test('--trace-filter keeps the model and log type asked for, case-insensitively, and counts what it leaves out', async () => {
    const gpt4 = await loadDataset(BURSTGPT, { trace: { filter: filter('model=gpt-4') } });
    assert.equal(gpt4.csvTrace!.filteredOut + gpt4.conversations.length + gpt4.csvTrace!.failedSkipped, 30);
    const reader = await readCsvTrace(BURSTGPT, 'burstgpt', { trace: { filter: filter('model=GPT-4,log=Conversation log|API log') } });
    assert.equal(reader.columns().inputLength.length, gpt4.conversations.length);
    const onlyFailed = await readCsvTrace(BURSTGPT, 'burstgpt', { trace: { filter: filter('failed=only') } });
    assert.deepEqual([...onlyFailed.columns().outputLength], [0, 0, 0]);
    const kept = await loadDataset(BURSTGPT, { trace: { filter: filter('failed=keep') } });
    assert.equal(kept.conversations.length, 30);
    // A failed request is replayed at max_tokens 1.
    assert.equal(kept.conversations.filter((c) => c.trace!.turns[0]!.outputLength === 1).length >= 3, true);
  });

  test('--trace-filter syntax: one-line problems for a bad pair or an unknown key', () => {
    assert.match(String(parseTraceFilter('model')), /expected KEY=VALUE pairs/);
    assert.match(String(parseTraceFilter('user=x')), /unknown key "user": expected one of model, log, failed/);
    assert.match(String(parseTraceFilter('failed=maybe')), /failed: expected skip, keep or only/);
    assert.match(String(parseTraceFilter('model=')), /model: expected a value/);
  });

  test('--trace-window keeps the rows in [start, end) of the trace clock and rebases them to the start', async () => {
    const loaded = await loadDataset(AZURE_2023, { trace: { window: { startSec: 2, endSec: 5 } } });
    const times = loaded.conversations.map((c) => c.trace!.turns[0]!.atMs!);
    assert.ok(times.length > 3 && times.every((t) => t >= 0 && t < 3000), `${times}`);
    assert.equal(loaded.csvTrace!.outsideWindow + times.length, 24);
  });

  test('trace stats of a CSV trace: lengths and rate from the kept rows, no prefix structure', async () => {
    const stats = csvTraceStats((await readCsvTrace(BURSTGPT, 'burstgpt')).columns());
    assert.equal(stats.prefixStructure, false);
    assert.equal(stats.requests, 27);
    assert.equal(stats.durationSec, 17);
    assert.equal(stats.infinite.hitRatio, 0);
    assert.equal(stats.outputLength!.min > 0, true);
  });

  test('bad rows: one line naming the file, the line and the field', async () => {
    const header = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n';
    assert.match(await loadError(write('a.csv', `${header}0,ChatGPT,12,3,15,API log\n1,ChatGPT,-4,3,15,API log\n`)), /a\.csv, line 3: Request tokens: expected a whole number of tokens >= 0, got "-4"$/);
    assert.match(await loadError(write('b.csv', `${header}soon,ChatGPT,12,3,15,API log\n`)), /b\.csv, line 2: Timestamp: expected seconds >= 0, got "soon"$/);
    assert.match(await loadError(write('c.csv', `${header}0,ChatGPT,12,3\n`)), /c\.csv, line 2: expected 6 comma-separated fields \(Timestamp,Model,.*\), got 4$/);
    const azure = 'TIMESTAMP,ContextTokens,GeneratedTokens\n';
    assert.match(await loadError(write('d.csv', `${azure}2023-11-16 18:15:46.6805900,10,2\nyesterday,10,2\n`)), /d\.csv, line 3: TIMESTAMP: expected a time such as 2023-11-16 18:15:46\.6805900, got "yesterday"$/);
    assert.match(await loadError(write('e.csv', `${azure}2023-11-16 18:15:46.6805900,10,0\n`)), /e\.csv: no request to replay: 1 row; 1 failed request skipped/);
  });
});
