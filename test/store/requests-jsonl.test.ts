import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DatasetError } from '../../src/errors/index.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { readRequestsJsonl, RequestsJsonlSink, streamRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { distModule, ensureDist } from '../helpers/dist.js';
import { makeRecord } from '../metrics/record-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'chatload-jsonl-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('RequestsJsonlSink', () => {
  test('writes one line per record and reads them back', () => {
    const path = join(dir, 'sub', 'requests.jsonl');
    const sink = RequestsJsonlSink.open(path);
    const records = [makeRecord({ turn: 1 }), makeRecord({ turn: 2, conversation_id: 'ü "quoted"\nline' })];
    for (const r of records) sink.write(r);
    assert.equal(sink.count, 2);
    sink.close();
    sink.close();
    assert.throws(() => sink.write(makeRecord()), /after close/);
    const text = readFileSync(path, 'utf8');
    assert.equal(text.split('\n').length, 3);
    assert.ok(text.endsWith('\n'));
    assert.deepEqual(readRequestsJsonl(path), records);
  });

  test('tolerates a torn last line, and a reopened sink starts on a fresh line', () => {
    const path = join(dir, 'torn.jsonl');
    const full = JSON.stringify(makeRecord({ turn: 1 }));
    writeFileSync(path, `${full}\n${full.slice(0, 40)}`);
    assert.deepEqual(
      readRequestsJsonl(path).map((r) => r.turn),
      [1],
    );
    const sink = RequestsJsonlSink.open(path);
    sink.write(makeRecord({ turn: 2 }));
    sink.close();
    assert.deepEqual(
      readRequestsJsonl(path).map((r) => r.turn),
      [1, 2],
    );
    // The fragment was cut before appending (issue #35: --resume left it as an invalid line amid the records).
    assert.deepEqual(readFileSync(path, 'utf8').split('\n'), [full, JSON.stringify(makeRecord({ turn: 2 })), '']);
  });

  test('a whole record that lost only its newline is kept: the reopened sink gives it one', () => {
    const path = join(dir, 'no-newline.jsonl');
    const full = JSON.stringify(makeRecord({ turn: 1 }));
    writeFileSync(path, `${full}\n${full}`);
    const sink = RequestsJsonlSink.open(path);
    sink.write(makeRecord({ turn: 2 }));
    sink.close();
    assert.deepEqual(readRequestsJsonl(path).map((r) => r.turn), [1, 1, 2]);
    assert.equal(readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').length, 3);
  });

  test('the streaming reader reads what the whole-file reader reads, across chunk boundaries and torn lines', { timeout: 30_000 }, async () => {
    const path = join(dir, 'stream.jsonl');
    // ~3 MB: several 1 MiB chunks, so lines (and a multi-byte character) straddle chunk boundaries.
    const records = Array.from({ length: 3000 }, (_, i) => makeRecord({ turn: i, conversation_id: `c-é-${i}`, itl_ms: Array.from({ length: 100 }, (_, k) => k + 0.5) }));
    const torn = JSON.stringify(makeRecord({ turn: -1 })).slice(0, 50);
    writeFileSync(path, `${records.slice(0, 1500).map((r) => JSON.stringify(r)).join('\n')}\n${torn}\n${records.slice(1500).map((r) => JSON.stringify(r)).join('\n')}\n${torn}`);
    const streamed: RequestRecord[] = [];
    assert.equal(await streamRequestsJsonl(path, (r) => streamed.push(r)), 3000);
    assert.deepEqual(streamed, readRequestsJsonl(path));
    assert.deepEqual(streamed, records);
    const bad = join(dir, 'bad-stream.jsonl');
    writeFileSync(bad, `${JSON.stringify(makeRecord())}\nnot json\n${JSON.stringify(makeRecord())}\n`);
    await assert.rejects(streamRequestsJsonl(bad, () => {}), (error: unknown) => error instanceof DatasetError && /line 2/.test(error.message));
  });

  test('an invalid line that is not torn throws a DatasetError with the line', () => {
    const path = join(dir, 'bad.jsonl');
    writeFileSync(path, `not json\n${JSON.stringify(makeRecord())}\n`);
    assert.throws(() => readRequestsJsonl(path), (error: unknown) => error instanceof DatasetError && /line 1/.test(error.message));
  });

  test('every complete line survives kill -9', { timeout: 30_000 }, async () => {
    const path = join(dir, 'killed.jsonl');
    // The compiled sink (the same source, built fresh by ensureDist): a child with no tsx starts in a fraction of the time.
    ensureDist();
    const sinkUrl = pathToFileURL(distModule('store/requests-jsonl.js')).href;
    // The child writes 50 records, then SIGKILLs itself: no exit handler, no flush, nothing but what write(2) stored.
    const script = `
      const { RequestsJsonlSink } = await import(${JSON.stringify(sinkUrl)});
      const sink = RequestsJsonlSink.open(${JSON.stringify(path)});
      for (let i = 0; i < 50; i++) sink.write({ turn: i, status: 'ok' });
      process.kill(process.pid, 'SIGKILL');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
    assert.equal(signal, 'SIGKILL');
    appendFileSync(path, '{"turn": 50, "sta'); // and a torn line as a crash mid-write would leave
    const records = readRequestsJsonl(path);
    assert.equal(records.length, 50);
    assert.equal(records[49]!.turn, 49);
  });
});
