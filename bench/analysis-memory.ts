// Benchmark: the end of a long run. A run's analysis reads its requests.jsonl back; up to EXACT_ANALYSIS_RECORDS it
// loads every record (exact), past it it streams them (statistics from histograms). Each case runs in a child
// process so its peak RSS is its own: the exact analysis of 200,000 records (the baseline), and the streamed analysis
// of 200,000 and of N records (default 1,000,000; --full 3,000,000), each record with 100 inter-token gaps.
// Usage: node --import tsx bench/analysis-memory.ts [--full]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { RequestsJsonlSink } from '../src/report/requests-jsonl.js';
import { makeRecord } from '../test/metrics/record-fixtures.js';

const FULL = process.argv.includes('--full');
const dir = mkdtempSync(join(tmpdir(), 'chatload-bench-analysis-'));
const root = fileURLToPath(new URL('..', import.meta.url));

function writeRun(records: number): string {
  const path = join(dir, `requests-${records}.jsonl`);
  const sink = RequestsJsonlSink.open(path);
  for (let i = 0; i < records; i++) {
    sink.write(makeRecord({ conversation_id: `c${i % 50_000}`, turn: 1 + Math.floor(i / 50_000) % 20, sent_at_ms: i / 10, done_at_ms: i / 10 + 900, ttft_ms: 20 + (i % 97), e2el_ms: 900 + (i % 101), input_num_tokens: 100 + (i % 4000), itl_ms: Array.from({ length: 100 }, (_, k) => 20 + ((i * 7 + k) % 13) + 0.123) }));
  }
  sink.close();
  return path;
}

/** Runs one analysis in a child process; its wall time and peak RSS. */
function analyze(path: string, exactRecords: number): { mode: string; seconds: number; peakMb: number } {
  const code = `
    import { analyzeRecordsFile } from './src/benchmark/stream-analysis.ts';
    import { normalizeRunOptions } from './src/options/run-options.ts';
    const t = performance.now();
    const a = await analyzeRecordsFile(${JSON.stringify(path)}, normalizeRunOptions({ warmupPercentages: [0, 10] }), { exactRecords: ${exactRecords} });
    console.log(JSON.stringify({ mode: a.mode, seconds: (performance.now() - t) / 1000, peakMb: process.resourceUsage().maxRSS / 1024 }));`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: 600_000 });
  if (child.status !== 0) throw new Error(`analysis failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { mode: string; seconds: number; peakMb: number };
}

try {
  const table = new Table({ head: ['records', 'file MB', 'analysis', 'seconds', 'peak RSS MB', 'RSS vs baseline'], style: { head: [], border: [] } });
  const small = writeRun(200_000);
  const big = writeRun(FULL ? 3_000_000 : 1_000_000);
  const baseline = analyze(small, 200_000);
  for (const [path, records, limit] of [[small, 200_000, 200_000], [small, 200_000, 0], [big, FULL ? 3_000_000 : 1_000_000, 0]] as const) {
    const r = path === small && limit > 0 ? baseline : analyze(path, limit);
    table.push([records.toLocaleString('en-US'), (statSync(path).size / 1048576).toFixed(0), r.mode, r.seconds.toFixed(1), r.peakMb.toFixed(0), `${(r.peakMb / baseline.peakMb).toFixed(2)}x`]);
  }
  console.log('end-of-run analysis: exact (every record loaded) against streamed (histograms), 100 gaps per record');
  console.log(table.toString());
} finally {
  rmSync(dir, { recursive: true, force: true });
}
