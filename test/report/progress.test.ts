import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProgressLine } from '../../src/report/progress.js';
import { makeFailed, makeRecord } from '../metrics/record-fixtures.js';

/** A stand-in for a TTY stream that keeps what was written. */
function fakeStream(): { stream: NodeJS.WriteStream; writes: string[] } {
  const writes: string[] = [];
  const stream = { write: (chunk: string) => writes.push(chunk) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, writes };
}

describe('ProgressLine', () => {
  test('renders counts, TTFT p50 over the last 256 records and errors', () => {
    const { stream, writes } = fakeStream();
    const line = new ProgressLine(stream, { total: 300 });
    assert.match(line.render(), /^requests 0\/300 \| \d+\.\d req\/s \| TTFT p50 - \| errors 0$/);
    // 300 records: the first 44 (ttft 1000) fall out of the window, leaving ttft 1..256.
    for (let i = 0; i < 44; i++) line.onRecord(makeRecord({ ttft_ms: 1000 }));
    for (let i = 1; i <= 254; i++) line.onRecord(makeRecord({ ttft_ms: i }));
    line.onRecord(makeFailed('timeout_ttft'));
    line.onRecord(makeFailed('dns'));
    assert.match(line.render(), /^requests 300\/300 \| .* \| TTFT p50 (\d+\.\d) ms \| errors 2$/);
    const p50 = Number(/TTFT p50 ([\d.]+)/.exec(line.render())![1]);
    // Window = the last 254 ok ttfts plus the last 2 of the 1000s: median of {1..254, 1000, 1000} = 128.5.
    assert.equal(p50, 128.5);
    line.stop();
    line.stop();
    assert.deepEqual(writes, ['\r\x1b[2K'], 'no draw before the first tick; stop clears once');
  });

  test('redraws on its timer only when something changed, and stops cleanly', { timeout: 5000 }, async () => {
    const { stream, writes } = fakeStream();
    const line = new ProgressLine(stream, { intervalMs: 5 });
    line.onRecord(makeRecord({ ttft_ms: 48.1 }));
    // Waits for the timer, not for a duration: polls until the draw appears (bounded by the test timeout).
    while (writes.length === 0) await sleep(5);
    assert.ok(writes[0]!.startsWith('\r\x1b[2K'), 'clears the line first');
    assert.match(writes[0]!.slice(5), /^requests 1 \| [\d.]+ req\/s \| TTFT p50 48\.1 ms \| errors 0$/);
    await sleep(30);
    assert.equal(writes.length, 1, 'nothing changed: no redraw');
    line.stop();
    assert.equal(writes.at(-1), '\r\x1b[2K');
  });
});
