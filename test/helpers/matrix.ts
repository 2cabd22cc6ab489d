// Shared bits of the reliability fault matrix: run a small benchmark against a faulty server and check the
// invariants every case must keep (records on disk = the summary's requests, results.json written, kinds counted).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBenchmark, type BenchmarkHooks, type BenchmarkResult } from '../../src/benchmark/run-benchmark.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { RunOptionsInput } from '../../src/options/run-options.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { syntheticConversations } from './datasets.js';
import { tempDir } from './tmp.js';

/** What one matrix case produced: the in-memory result, the records read back from disk, the wall time (ms). */
export interface MatrixRun {
  result: BenchmarkResult;
  records: RequestRecord[];
  dir: string;
  elapsedMs: number;
}

/** Shape of the dataset a matrix case replays. */
export interface MatrixDataset {
  conversations: number;
  userTurns: number;
  /** Words per recorded answer (sets max_tokens). @default 8 */
  answerWords?: number;
}

/**
 * Runs a benchmark against `url` (one client, no early stop, no HTML report, --max-error-rate 0 unless overridden)
 * and checks the invariants of every matrix case: requests.jsonl holds exactly one valid line per request the
 * summary counts, results.json is on disk and agrees, and the exit code follows the documented rule.
 */
export async function runMatrixCase(
  url: string,
  dataset: MatrixDataset,
  options: Partial<RunOptionsInput> = {},
  hooks: BenchmarkHooks = {},
): Promise<MatrixRun> {
  const dir = tempDir('matrix');
  const inputFile = join(dir, 'in.json');
  const conversations = syntheticConversations({ count: dataset.conversations, userTurns: () => dataset.userTurns, answerWords: dataset.answerWords });
  writeFileSync(inputFile, JSON.stringify(conversations));
  const startedMs = performance.now();
  const result = await runBenchmark({ url, inputFile, outputDir: dir, numClients: 1, earlyStop: false, report: false, maxErrorRate: 0, workers: 1, readyTimeoutSec: 5, ...options }, hooks);
  const elapsedMs = performance.now() - startedMs;
  const records = readRequestsJsonl(result.files.requests);
  const { completed, failed } = result.summary;
  assert.equal(records.length, completed + failed, 'every request the summary counts is a line in requests.jsonl');
  assert.equal(records.filter((r) => r.status === 'ok').length, completed, 'every completed request is on disk');
  assert.ok(existsSync(result.files.results), 'results.json is written');
  const onDisk = JSON.parse(readFileSync(result.files.results, 'utf8')) as { completed: number; failed: number };
  assert.equal(onDisk.completed, completed);
  assert.equal(onDisk.failed, failed);
  for (const record of records) {
    if (record.status === 'error') {
      assert.ok(record.error_kind !== null, 'a failed record has a kind');
      assert.ok(record.error !== null && !/[\r\n]/.test(record.error), `one-line error message: ${record.error}`);
    }
  }
  const rate = completed + failed === 0 ? 0 : failed / (completed + failed);
  const maxErrorRate = options.maxErrorRate ?? 0;
  if (result.load.stopReason !== 'interrupted') assert.equal(result.exitCode, rate > maxErrorRate ? 1 : 0, 'exit code: 1 only over --max-error-rate');
  return { result, records, dir, elapsedMs };
}

/** The error kinds that occurred (count > 0), sorted. */
export function kindsSeen(result: BenchmarkResult): string[] {
  return Object.entries(result.summary.failed_by_kind)
    .filter(([, count]) => count > 0)
    .map(([kind]) => kind)
    .sort();
}
