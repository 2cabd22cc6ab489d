import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import { csvField, toRequestsCsv } from '../../src/report/csv.js';
import { EXCEL_SHEETS, PER_TURN_HEADERS } from '../../src/report/excel.js';
import { RECORD_COLUMNS, recordColumns } from '../../src/report/record-columns.js';
import { REPORT_FILES, writeRunReports } from '../../src/report/write-reports.js';
import { syntheticRecords, writeRunDir } from '../helpers/report-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

describe('Excel workbook', { timeout: 30_000 }, () => {
  test('reads back: sheet names, the Raw data header row, one row per request, the per-turn table', async () => {
    const dir = tempDir('excel');
    try {
      const records = syntheticRecords({ conversations: 5, turns: 3 });
      writeRunDir(dir, records);
      const written = await writeRunReports(dir, { excel: true });
      assert.deepEqual(written, { excel: join(dir, REPORT_FILES.excel) });

      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.readFile(written.excel!);
      assert.deepEqual(workbook.worksheets.map((s) => s.name), [...EXCEL_SHEETS]);

      const raw = workbook.getWorksheet('Raw data')!;
      const header = (raw.getRow(1).values as unknown[]).slice(1);
      assert.deepEqual(header, recordColumns(records));
      assert.deepEqual(header.slice(0, RECORD_COLUMNS.length), [...RECORD_COLUMNS]);
      assert.equal(header[0], 'ttft_ms', 'the reference\'s columns come first');
      assert.equal(raw.actualRowCount - 1, records.length, 'one row per request');
      // Values survive the round trip, by column.
      const col = (name: string): number => header.indexOf(name) + 1;
      const failedRow = records.findIndex((r) => r.status === 'error') + 2;
      assert.equal(raw.getRow(failedRow).getCell(col('status')).value, 'error');
      assert.equal(raw.getRow(failedRow).getCell(col('http_status')).value, 500);
      assert.equal(raw.getRow(2).getCell(col('conversation_id')).value, records[0]!.conversation_id);
      assert.equal(raw.getRow(2).getCell(col('ttft_ms')).value, records[0]!.ttft_ms);

      const summary = workbook.getWorksheet('Summary')!;
      const firstColumn = (summary.getColumn(1).values as unknown[]).filter((v) => typeof v === 'string');
      for (const label of ['Parameters', 'Statistics', 'ttft_ms', 'tpot_ms', 'e2el_ms', 'runtime_sec', 'requests_per_sec']) {
        assert.ok(firstColumn.includes(label), label);
      }

      const perTurn = workbook.getWorksheet('Per turn')!;
      assert.deepEqual((perTurn.getRow(1).values as unknown[]).slice(1), [...PER_TURN_HEADERS]);
      assert.equal(perTurn.actualRowCount - 1, 3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('CSV', { timeout: 30_000 }, () => {
  test('fields are quoted as RFC 4180 says and formulas are defused', () => {
    assert.equal(csvField(null), '');
    assert.equal(csvField(1.5), '1.5');
    assert.equal(csvField(true), 'true');
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"\nbye'), '"say ""hi""\nbye"');
    assert.equal(csvField('=HYPERLINK("http://x")'), '"\'=HYPERLINK(""http://x"")"');
    assert.equal(csvField('-1+2'), "'-1+2");
    assert.equal(csvField(-1), '-1', 'numbers are numbers');
  });

  test('writes requests.csv: a header and one row per request, extra record fields as columns', async () => {
    const dir = tempDir('csv');
    try {
      const records = syntheticRecords({ conversations: 3, turns: 2 });
      (records[0] as unknown as Record<string, unknown>).future_field = 'x';
      writeRunDir(dir, records);
      const written = await writeRunReports(dir, { csv: true });
      const text = readFileSync(written.csv!, 'utf8');
      assert.equal(text, toRequestsCsv(records));
      const lines = text.split('\r\n').filter((l) => l !== '');
      assert.equal(lines.length, records.length + 1);
      const header = lines[0]!.split(',');
      assert.equal(header[0], 'ttft_ms');
      assert.ok(header.includes('future_field'));
      assert.equal(header[header.length - 1], 'itl_ms');
      assert.match(lines[1]!, /"\[[\d.,]+\]"$/, 'itl_ms is a JSON array');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
