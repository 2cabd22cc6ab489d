// A failed write during a run (issue #16): the first failed append to requests.jsonl stops new requests ('output_error'),
// the requests in flight finish into memory and are written once more, and the run ends with ONE OutputError (exit 1)
// naming the file and the cause; every request is on disk or counted in lost_records. The full disk is an injected
// writer (mounting a small tmpfs is not permitted here); results.json's failure is real: a folder in its place.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { ExitCode, OutputError } from '../../src/errors/index.js';
import { readRequestsJsonl, RequestsJsonlSink } from '../../src/store/requests-jsonl.js';
import { makeRecord } from '../metrics/record-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('output-errors');
after(() => rmSync(dir, { recursive: true, force: true }));

const ENOSPC = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** A writeSync whose writes number `from` and later fail (the first `partial` bytes of the first failing one land). */
function diskFullAfter(from: number, partial = 0): { write: typeof writeSync; calls: () => number } {
  let calls = 0;
  const write = ((fd: number, data: Buffer, offset: number, length: number): number => {
    calls += 1;
    if (calls < from) return writeSync(fd, data, offset, length);
    if (calls === from && partial > 0) {
      writeSync(fd, data, offset, partial);
      throw ENOSPC();
    }
    throw ENOSPC();
  }) as typeof writeSync;
  return { write, calls: () => calls };
}

/** A non-empty folder where `out`'s results.json goes: the atomic rename onto it fails. */
function blockResultsJson(out: string): void {
  mkdirSync(join(out, 'results.json'));
  writeFileSync(join(out, 'results.json', 'x'), 'x');
}

/** What a run that must fail rejected with (a run that resolves fails the test). */
function failedRun(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => assert.fail('the run should fail'),
    (e: unknown) => e,
  );
}

describe('RequestsJsonlSink with a failing writer', () => {
  test('a write cut short leaves a torn part; the next record still gets its own line', () => {
    const path = join(dir, 'torn.jsonl');
    let failNext = true;
    const sink = RequestsJsonlSink.open(path, ((fd: number, data: Buffer, offset: number, length: number): number => {
      if (!failNext) return writeSync(fd, data, offset, length);
      failNext = false;
      writeSync(fd, data, offset, 10);
      throw ENOSPC();
    }) as typeof writeSync);
    assert.throws(() => sink.write(makeRecord({ conversation_id: 'a' })), /ENOSPC/);
    sink.write(makeRecord({ conversation_id: 'b' }));
    sink.close();
    assert.deepEqual(readRequestsJsonl(path).map((r) => r.conversation_id), ['b'], 'the torn part is skipped, the next record is whole');
  });
});

describe('runBenchmark when a write fails', () => {
  test('requests.jsonl fills up: no new requests, one OutputError, every request on disk or lost_records', { timeout: 60_000 }, async () => {
    const out = join(dir, 'full');
    const disk = diskFullAfter(4, 20);
    const error = await failedRun(runBenchmark({ maxNumRequests: 200, numClients: 4, simProfile: 'cpu-tiny', seed: 1, outputDir: out }, { writeRecords: disk.write }));
    assert.ok(error instanceof OutputError, String(error));
    assert.equal(error.exitCode, ExitCode.runFailed);
    assert.equal(error.file, join(out, 'requests.jsonl'));
    assert.match(error.message, /^cannot write .*requests\.jsonl \(ENOSPC: no space left on device\): the run stopped \(output_error\); \d+ request records lost \(lost_records\)$/);
    assert.doesNotMatch(error.message, /\n/);
    const onDisk = readRequestsJsonl(join(out, 'requests.jsonl'));
    assert.equal(onDisk.length, 3, 'the three records written before the disk filled');
    // results.json could be written (the injected failure is requests.jsonl's): it says why and how many are lost.
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { stop_reason: string; lost_records: number; summary: { completed: number; failed: number } };
    assert.equal(results.stop_reason, 'output_error');
    assert.equal(results.lost_records, error.lostRecords);
    const requests = results.summary.completed + results.summary.failed;
    assert.equal(onDisk.length + error.lostRecords!, requests, 'every request is on disk or counted lost');
    assert.ok(requests < 200, `no new requests after the failure (${requests} ended)`);
  });

  test('a write fails once, then the disk has room: the kept records are written on the retry, none lost', { timeout: 60_000 }, async () => {
    const out = join(dir, 'once');
    let calls = 0;
    const write = ((fd: number, data: Buffer, offset: number, length: number): number => {
      calls += 1;
      if (calls === 3) throw ENOSPC();
      return writeSync(fd, data, offset, length);
    }) as typeof writeSync;
    const error = await runBenchmark({ maxNumRequests: 100, numClients: 2, simProfile: 'cpu-tiny', seed: 2, outputDir: out }, { writeRecords: write }).then(
      () => assert.fail('the run should fail'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof OutputError);
    assert.equal(error.lostRecords, 0);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { lost_records: number; summary: { completed: number; failed: number } };
    assert.equal(readRequestsJsonl(join(out, 'requests.jsonl')).length, results.summary.completed + results.summary.failed);
    assert.equal(results.lost_records, 0);
  });

  test('requests.jsonl and results.json both fail: one line says both (issue #35)', { timeout: 60_000 }, async () => {
    const out = join(dir, 'both');
    const disk = diskFullAfter(4, 20);
    const error = await failedRun(runBenchmark({ maxNumRequests: 60, numClients: 2, simProfile: 'cpu-tiny', seed: 1, outputDir: out }, { writeRecords: disk.write, onStart: () => blockResultsJson(out) }));
    assert.ok(error instanceof OutputError, String(error));
    assert.match(error.message, /^cannot write .*requests\.jsonl \(ENOSPC: no space left on device\): the run stopped \(output_error\); \d+ request records lost \(lost_records\); .*results\.json was not written either \((EISDIR|ENOTEMPTY|EEXIST): [^)]+\)$/);
    assert.doesNotMatch(error.message, /\n/);
  });

  test('results.json cannot be written: one OutputError naming it and the cause, not an internal error', { timeout: 60_000 }, async () => {
    const out = join(dir, 'results-blocked');
    const error = await failedRun(runBenchmark({ maxNumRequests: 4, numClients: 2, simProfile: 'cpu-tiny', seed: 1, outputDir: out }, { onStart: () => blockResultsJson(out) }));
    assert.ok(error instanceof OutputError, String(error));
    assert.equal(error.exitCode, ExitCode.runFailed);
    assert.match(error.message, /^cannot write .*results\.json \((EISDIR|ENOTEMPTY|EEXIST): [^)]+\)$/);
    assert.equal(readRequestsJsonl(join(out, 'requests.jsonl')).length, 4, 'every record is on disk');
  });
});
