import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import { ConfigError } from '../../src/errors/index.js';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { summarize, summarizeWarmupPercentages, type Summary } from '../../src/metrics/summary.js';
import { toRequestsCsv, writeRequestsCsvFromJsonl } from '../../src/report/csv.js';
import { escapeHtml } from '../../src/report/html-util.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { RequestsJsonlSink } from '../../src/store/requests-jsonl.js';
import { buildResultsDocument, writeJsonAtomic, type ResultsExtra } from '../../src/store/results-json.js';
import { loadRunData, normalizeRecord } from '../../src/store/run-data.js';
import { timeSeries } from '../../src/report/series.js';
import { writeReportsFor } from '../../src/report/write-reports.js';
import { makeFailed, makeRecord } from '../metrics/record-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

const TOTAL = 2_000;
const SAMPLE = 200;

/**
 * TOTAL records of a closed-loop run over 20 s: record i is sent at 10 i ms, turns 1..5, every 13th fails, the first 10
 * are warmup, latencies and token counts vary with i, the server reports cached tokens on even records.
 */
function runRecords(): RequestRecord[] {
  return Array.from({ length: TOTAL }, (_, i) => {
    const sent = i * 10;
    const turn = 1 + (i % 5);
    const common = {
      conversation_id: `CONV_ID_${Math.floor(i / 5)}`,
      conversation_index: Math.floor(i / 5),
      turn,
      client_id: i % 4,
      warmup: i < 10,
      start_time_ms: 1_700_000_000_000 + sent,
      sent_at_ms: sent,
      input_num_tokens: 100 * turn + (i % 17),
    };
    if (i % 13 === 12) return makeFailed('http_status', { ...common, http_status: 500, error: `HTTP 500: fault ${i % 3}`, done_at_ms: sent + 5, e2el_ms: 5, latency_ms: 5 });
    const ttft = 10 + (i % 97);
    const gaps = Array.from({ length: 2 + (i % 7) }, (_, g) => 3 + ((i + g) % 11));
    const e2el = ttft + gaps.reduce((a, b) => a + b, 0);
    return makeRecord({
      ...common,
      first_token_at_ms: sent + ttft,
      done_at_ms: sent + e2el,
      ttft_ms: ttft,
      ttft_content_ms: ttft,
      itl_ms: gaps,
      tpot_ms: (e2el - ttft) / gaps.length,
      e2el_ms: e2el,
      latency_ms: e2el,
      output_num_tokens: gaps.length + 1,
      cached_tokens: i % 2 === 0 ? 50 * (turn - 1) : null,
      expected_cached_tokens: 60 * (turn - 1),
    });
  });
}

/** Writes a results folder with the run's own writers: requests.jsonl through the sink, results.json unless unfinished. */
function writeRun(dir: string, records: readonly RequestRecord[], options: { finished?: boolean } = {}): void {
  const sink = RequestsJsonlSink.open(join(dir, 'requests.jsonl'));
  try {
    for (const r of records) sink.write(r);
  } finally {
    sink.close();
  }
  if (options.finished === false) return;
  writeJsonAtomic(
    join(dir, 'results.json'),
    buildResultsDocument({
      config: { numClients: 4 },
      summary: summarize(records),
      warmupPercentages: summarizeWarmupPercentages(records, [0]),
      perTurn: summarizePerTurn(records),
      clientHealth: null,
      conversations: { total: TOTAL / 5, completed: TOTAL / 5, failed: 0, dropped: 0, unfinished: 0, not_started: 0 },
      extra: { model: 'sampling-model', warnings: [] } as unknown as ResultsExtra,
    }),
  );
}

/** JSON round trip: what a file holds of a value (results.json's summary as loadRunData reads it). */
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('reports of runs larger than the record limit', { timeout: 60_000 }, () => {
  test('loadRunData keeps a deterministic uniform sample spread over the whole run; summary and per turn from results.json', async () => {
    const dir = tempDir('sampling');
    try {
      const records = runRecords();
      writeRun(dir, records);
      const data = await loadRunData(dir, { maxRecords: SAMPLE });
      assert.equal(data.sampled, true);
      assert.equal(data.recordsTotal, TOTAL);
      assert.equal(data.records.length, SAMPLE);
      assert.equal(new Set(data.records.map((r) => r.sent_at_ms)).size, SAMPLE, 'no record twice');
      const sent = data.records.map((r) => r.sent_at_ms);
      assert.deepEqual(sent, [...sent].sort((a, b) => a - b), 'file order kept');
      // Spread: every quarter of the run is represented, not just its start (a "first N" would fail this).
      const quarterMs = (TOTAL * 10) / 4;
      for (let q = 0; q < 4; q++) {
        const n = sent.filter((t) => t >= q * quarterMs && t < (q + 1) * quarterMs).length;
        assert.ok(n >= 20, `quarter ${q} has ${n} of ${SAMPLE}`);
      }
      // Each sampled record is the file's record, normalized.
      const byTime = new Map(records.map((r) => [r.sent_at_ms, r]));
      for (const r of data.records) assert.deepEqual(r, normalizeRecord(viaJson(byTime.get(r.sent_at_ms)!)));

      const again = await loadRunData(dir, { maxRecords: SAMPLE });
      assert.deepEqual(again.records.map((r) => r.sent_at_ms), sent, 'the same file gives the same sample');

      assert.deepEqual(data.summary, viaJson(summarize(records)));
      assert.deepEqual(data.perTurn, viaJson(summarizePerTurn(records)));
      const warning = data.warnings.find((w) => w.includes('uniform sample'));
      assert.equal(
        warning,
        `${TOTAL} records: charts, the errors list and the Excel raw-data sheet use a uniform sample of ${SAMPLE} (the CSV holds every record); ` +
          'the summary and per-turn tables are from results.json (all records).',
      );

      // A bigger sample still covers both halves about evenly (a fixed seed: this is deterministic, not flaky).
      const half = await loadRunData(dir, { maxRecords: TOTAL / 2 });
      const firstHalf = half.records.filter((r) => r.sent_at_ms < (TOTAL * 10) / 2).length;
      assert.ok(firstHalf > 400 && firstHalf < 600, `first half holds ${firstHalf} of ${TOTAL / 2}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('at or under the limit every record is loaded, as before', async () => {
    const dir = tempDir('sampling-all');
    try {
      const records = runRecords();
      writeRun(dir, records);
      const data = await loadRunData(dir, { maxRecords: TOTAL });
      assert.equal(data.sampled, false);
      assert.equal(data.recordsTotal, TOTAL);
      assert.deepEqual(data.records, records.map((r) => normalizeRecord(viaJson(r))));
      assert.ok(!data.warnings.some((w) => w.includes('sample')));
      assert.equal((await loadRunData(dir)).sampled, false, 'the default limit is far above 2,000');
      await assert.rejects(loadRunData(dir, { maxRecords: -1 }), ConfigError);
      await assert.rejects(loadRunData(dir, { maxRecords: 1.5 }), ConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('writeReportsFor: the CSV holds every record, the HTML shows the sample warning, the Excel raw data is the sample', async () => {
    const dir = tempDir('sampling-reports');
    try {
      const records = runRecords();
      writeRun(dir, records);
      const data = await loadRunData(dir, { maxRecords: SAMPLE });
      const written = await writeReportsFor(data, { csv: true, excel: true }, { html: join(dir, 'report.html') });

      const csv = readFileSync(written.csv!, 'utf8');
      assert.equal(csv.split('\r\n').filter((l) => l !== '').length, TOTAL + 1, 'a header and 2,000 data rows');
      assert.equal(csv, toRequestsCsv(records.map((r) => normalizeRecord(viaJson(r)))), 'the same CSV as from every record in memory');

      const html = readFileSync(written.html!, 'utf8');
      assert.match(html, /<strong>Warnings<\/strong>/);
      assert.ok(html.includes(escapeHtml(`use a uniform sample of ${SAMPLE} (the CSV holds every record)`)), 'the warning is in the banner');
      assert.ok(html.includes(`a uniform sample of ${SAMPLE} of ${TOTAL} records`), 'charts say they come from the sample');
      for (const chart of ['ttft-cdf', 'e2el-cdf', 'request-throughput-over-time', 'errors-over-time']) assert.match(html, new RegExp(`data-chart="${chart}"`));
      assert.match(html, /The counts by kind above cover every record/);

      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.readFile(written.excel!);
      assert.equal(workbook.getWorksheet('Raw data')!.actualRowCount - 1, SAMPLE, 'one row per sampled record');
      const summary = workbook.getWorksheet('Summary')!;
      const rawData = (summary.getColumn(1).values as unknown[]).indexOf('raw_data');
      assert.ok(rawData > 0, 'the Summary sheet has a raw_data row');
      assert.match(String(summary.getRow(rawData).getCell(2).value), new RegExp(`^uniform sample of ${SAMPLE} of ${TOTAL} records`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an unfinished run over the limit: exact counts and totals, statistics from histograms of every record, per turn too, warnings', async () => {
    const dir = tempDir('sampling-unfinished');
    try {
      const records = runRecords();
      writeRun(dir, records, { finished: false });
      appendFileSync(join(dir, 'requests.jsonl'), '{"conversation_id":"torn'); // killed mid-write
      const data = await loadRunData(dir, { maxRecords: SAMPLE });
      assert.equal(data.finished, false);
      assert.equal(data.sampled, true);
      assert.equal(data.recordsTotal, TOTAL);
      assert.equal(data.records.length, SAMPLE);

      const exact: Summary = summarize(records);
      const s = data.summary;
      for (const key of ['requests', 'completed', 'failed', 'warmup_excluded', 'error_rate', 'runtime_sec', 'request_throughput', 'total_input_tokens', 'total_output_tokens', 'total_cached_tokens', 'cache_hit_ratio', 'cache_efficiency'] as const) {
        assert.equal(s[key], exact[key], key);
      }
      assert.deepEqual(s.failed_by_kind, exact.failed_by_kind);
      assert.equal(s.completed + s.failed, TOTAL - 10);
      for (const metric of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms'] as const) {
        const got = s.metrics[metric]!;
        const want = exact.metrics[metric]!;
        assert.equal(got.count, want.count, `${metric} count`);
        assert.ok(Math.abs(got.mean - want.mean) < 1e-6 * want.mean, `${metric} mean`);
        assert.ok(Math.abs(got.p99 - want.p99) <= 0.01 * want.p99, `${metric} p99 ${got.p99} vs ${want.p99}`);
      }
      assert.ok(s.approximate_metrics.includes('ttft_ms'));

      const exactTurns = summarizePerTurn(records);
      assert.deepEqual(
        data.perTurn.map((t) => [t.turn, t.completed, t.failed, t.cache_hit_ratio, t.ttft_ms?.count, t.ttft_ms?.max]),
        exactTurns.map((t) => [t.turn, t.completed, t.failed, t.cache_hit_ratio, t.ttft_ms?.count, t.ttft_ms?.max]),
        'per-turn figures cover every record, not the sample',
      );

      assert.match(data.warnings[0]!, new RegExp(`did not finish.*from the ${TOTAL} records`));
      assert.ok(data.warnings.some((w) => w.includes(`uniform sample of ${SAMPLE}`)));
      assert.ok(data.warnings.some((w) => /histograms/.test(w) && /per-turn table counts every record/.test(w)));

      const html = renderHtmlReport(data);
      assert.match(html, /This run did not finish/);
      assert.ok(html.includes(escapeHtml(`uniform sample of ${SAMPLE}`)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the streamed CSV finds columns that appear late, skips a torn last line, and matches the in-memory CSV', async () => {
    const dir = tempDir('sampling-csv');
    try {
      const records = runRecords();
      // A field only the last records carry (past the first batch of columns).
      for (const r of records.slice(1_900)) (r as unknown as Record<string, unknown>).late_field = 'late';
      writeRun(dir, records, { finished: false });
      appendFileSync(join(dir, 'requests.jsonl'), '{"conversation_id":"torn');
      const path = join(dir, 'out', 'all.csv');
      assert.equal(await writeRequestsCsvFromJsonl(path, join(dir, 'requests.jsonl')), TOTAL);
      const csv = readFileSync(path, 'utf8');
      assert.equal(csv, toRequestsCsv(records.map((r) => normalizeRecord(viaJson(r)))));
      assert.ok(csv.split('\r\n')[0]!.split(',').includes('late_field'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('timeSeries scales counts and rates of a sample, not its percentiles or ratios', () => {
    const records = runRecords();
    const plain = timeSeries(records);
    const scaled = timeSeries(records, { scale: 10 });
    assert.equal(scaled.bin_sec, plain.bin_sec);
    plain.bins.forEach((b, i) => {
      const s = scaled.bins[i]!;
      assert.ok(Math.abs(s.request_rate - 10 * b.request_rate) < 1e-9);
      assert.ok(Math.abs(s.in_flight_mean - 10 * b.in_flight_mean) < 1e-9);
      assert.equal(s.in_flight_max, 10 * b.in_flight_max);
      assert.equal(s.ttft_p50_ms, b.ttft_p50_ms);
      assert.equal(s.cache_hit_ratio, b.cache_hit_ratio);
      for (const [kind, n] of Object.entries(b.errors)) assert.equal(s.errors[kind], 10 * n);
    });
  });
});
