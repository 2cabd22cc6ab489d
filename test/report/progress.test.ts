import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LiveModel } from '../../src/report/live-model.js';
import { panelLines, plainLine, waitingLine } from '../../src/report/live-panel.js';
import { LiveView } from '../../src/report/progress.js';
import { makeFailed, makeRecord } from '../metrics/record-fixtures.js';

/** A stand-in for a terminal stream that keeps what was written. */
function fakeStream(columns = 80): { stream: { write(chunk: string): boolean; columns: number }; writes: string[] } {
  const writes: string[] = [];
  return { stream: { write: (chunk: string) => writes.push(chunk) > 0, columns }, writes };
}

describe('LiveModel', () => {
  test('counts progress, in flight, errors by kind, and the rates of the last whole seconds', () => {
    const model = new LiveModel(0, { totalRequests: 200 });
    for (let i = 0; i < 5; i++) model.onSend();
    // 30 completed requests of 10 output tokens each, spread over seconds 0, 1 and 2; two failures.
    for (let i = 0; i < 30; i++) model.onRecord(makeRecord({ ttft_ms: 10 + i, output_num_tokens: 10 }), (i % 3) * 1000 + 10);
    model.onRecord(makeFailed('timeout_ttft'), 2500);
    model.onRecord(makeFailed('timeout_ttft'), 2600);
    const s = model.snapshot(3_100);
    assert.equal(s.done, 32);
    assert.equal(s.totalRequests, 200);
    assert.equal(s.inFlight, 0, 'never below 0 when more records than sends arrive (warmup, worker threads)');
    // Window: seconds 0, 1 and 2 (second 3 is partial and left out): 30 requests over 3 s.
    assert.equal(s.requestRate, 10);
    assert.equal(s.outputTokenRate, 100);
    assert.deepEqual(s.errors, [['timeout_ttft', 2]]);
    assert.equal(s.ttft!.n, 30);
    assert.equal(s.ttft!.p99, null, 'p99 of 30 values is not shown, as in the terminal');
    assert.equal(s.ttft!.p50, 24.5);
  });

  test('p99 appears once the window holds 100 values; cache ratios are actual and expected', () => {
    const model = new LiveModel(0);
    for (let i = 1; i <= 100; i++) model.onRecord(makeRecord({ ttft_ms: i, input_num_tokens: 100, cached_tokens: 50, expected_cached_tokens: 80 }), 5);
    const s = model.snapshot(10);
    assert.ok(s.ttft!.p99 !== null && s.ttft!.p99 > 98);
    assert.equal(s.cacheActual, 0.5);
    assert.equal(s.cacheExpected, 0.8);
  });

  test('phases: steady, ramp-up while the ramp lasts, draining on stop', () => {
    const model = new LiveModel(0, { rampUpMs: 5_000 });
    assert.equal(model.snapshot(0).phase, 'starting');
    model.onPhase('benchmark', 1_000);
    assert.equal(model.snapshot(2_000).phase, 'ramp-up');
    assert.equal(model.snapshot(7_000).phase, 'steady');
    model.onPhase('stopping', 8_000);
    assert.equal(model.snapshot(8_000).phase, 'draining');
  });
});

describe('live panel text', () => {
  const model = new LiveModel(0, { totalRequests: 248 });
  for (let i = 0; i < 100; i++) model.onRecord(makeRecord({ ttft_ms: 20, tpot_ms: 5 }), 500);
  model.onHealth(1.5, 12);
  const snapshot = { ...model.snapshot(10_000), heading: 'point 2/5: concurrency 8' };

  test('shows the bar against the total, elapsed and ETA, rates, TTFT/TPOT, cache, errors, client health, heading', () => {
    const text = panelLines(snapshot, 100).join('\n');
    assert.match(text, /point 2\/5: concurrency 8/);
    assert.match(text, /10 s elapsed · ETA 15 s/);
    assert.match(text, /\[█+░+\] 100\/248 requests 40%/);
    assert.match(text, /in flight - · 10\.0 req\/s/);
    assert.match(text, /TTFT p50 20\.0 p99 20\.0 ms · TPOT p50 5\.0 p99 - ms|TTFT p50 20\.0 p99 20\.0 ms · TPOT p50 5\.0 p99 5\.0 ms/);
    assert.match(text, /cache hit .* \(expected .*\) · errors 0/);
    assert.match(text, /client: loop delay 1\.5 ms · CPU 12%/);
  });

  test('no line is wider than the terminal minus one column, however narrow', () => {
    for (const columns of [20, 40, 60, 200]) {
      for (const line of panelLines(snapshot, columns)) assert.ok(line.length <= Math.max(10, columns - 1), `${columns}: ${line}`);
    }
  });

  test('the plain line and the countdown say the same things in one line', () => {
    assert.match(plainLine(snapshot), /^chatload: point 2\/5: concurrency 8 \| starting 10 s, ETA 15 s \| 100\/248 requests \(40%\) \|/);
    assert.doesNotMatch(plainLine(snapshot), /\n/);
    assert.equal(waitingLine('http://127.0.0.1:9', 57_200), 'chatload: waiting for http://127.0.0.1:9 to answer: 57 s left (--ready-timeout-sec)');
  });

  test("the countdown says the last attempt's cause, escaped (issue #34)", () => {
    const { stream } = fakeStream(200);
    const view = new LiveView(stream, 'panel', { now: () => 0 });
    view.waitingForServer('http://127.0.0.1:9', 60_000);
    view.serverNotReady('GET http://127.0.0.1:9/v1/models answered HTTP 503: \x1b]0;pwned\x07loading');
    assert.deepEqual(view.lines(200), ['chatload: waiting for http://127.0.0.1:9 to answer: 1m00s left (--ready-timeout-sec); last: GET http://127.0.0.1:9/v1/models answered HTTP 503: \\x1b]0;pwned\\x07loading']);
  });
});

describe('LiveView', () => {
  test('print() clears the drawn panel first and draws it again after the text', () => {
    let now = 0;
    const { stream, writes } = fakeStream(60);
    const view = new LiveView(stream, 'panel', { now: () => now });
    view.start({ totalRequests: 10 });
    now = 300;
    view.print('first\n'); // nothing drawn yet: no clearing sequence
    assert.equal(writes[0], 'first\n');
    const drawn = writes[1]!;
    assert.match(drawn, /0\/10 requests/);
    const rows = drawn.split('\n').length;
    view.print('chatload: warning: something\n');
    const clear = `\r\x1b[${rows - 1}A${'\x1b[2K\x1b[1B'.repeat(rows - 1)}\x1b[2K\x1b[${rows - 1}A`;
    assert.equal(writes[2], clear, 'moves to the panel top and blanks its rows one by one');
    assert.equal(writes[3], 'chatload: warning: something\n');
    view.stop();
    assert.equal(writes.at(-1), clear, 'stop clears the panel');
    view.stop();
  });

  test('a clear counts rows at the width the terminal has now, read before Node has handled SIGWINCH', () => {
    let now = 0;
    // A terminal narrowed from 60 to 20 columns: `columns` still says 60 until the ioctl refresh runs, as in Node.
    let real = 60;
    const writes: string[] = [];
    const stream = { columns: 60, write: (chunk: string) => writes.push(chunk) > 0, _refreshSize(): void { this.columns = real; } };
    const view = new LiveView(stream, 'panel', { now: () => now });
    view.start({ totalRequests: 10 });
    now = 300;
    view.print('first\n');
    const lengths = writes[1]!.split('\n').map((l) => l.replaceAll('\x1b[2K', '').length);
    real = 20; // the terminal re-wraps each drawn line at 20 columns
    view.print('second\n');
    const rows = lengths.reduce((n, len) => n + Math.max(1, Math.ceil(len / 20)), 0);
    assert.ok(rows > lengths.length, 'some drawn line is wider than 20 columns');
    assert.equal(writes[2], `\r\x1b[${rows - 1}A${'\x1b[2K\x1b[1B'.repeat(rows - 1)}\x1b[2K\x1b[${rows - 1}A`);
    assert.ok(writes[4]!.split('\n').every((l) => l.replaceAll('\x1b[2K', '').length <= 19), 'the next frame fits the new width');
    view.stop();
  });

  test("'plain' writes one whole line per 10 s of the run's clock, and no control characters", { timeout: 10_000 }, async () => {
    let now = 0;
    const { stream, writes } = fakeStream();
    const view = new LiveView(stream, 'plain', { now: () => now });
    view.start({ totalRequests: 10 });
    view.onRecord(makeRecord({ ttft_ms: 30 }));
    now = 9_000;
    await sleep(600); // two ticks: not yet 10 s
    assert.equal(writes.length, 0, 'not yet 10 s');
    now = 10_500;
    while (writes.length === 0) await sleep(50); // the next tick (bounded by the test's timeout)
    assert.equal(writes.length, 1);
    assert.match(writes[0]!, /^chatload: starting 11 s, ETA \d+m?\d* ?s? \| 1\/10 requests \(10%\) \| .*TTFT p50 30\.0 p99 - ms.*\n$/);
    assert.ok(!writes[0]!.includes('\x1b'), 'no escape sequence');
    view.stop();
  });

  test("'off' never writes anything but printed text", () => {
    const { stream, writes } = fakeStream();
    const view = new LiveView(stream, 'off');
    view.start({ totalRequests: 10 });
    view.onRecord(makeRecord());
    view.print('x\n');
    view.stop();
    assert.deepEqual(writes, ['x\n']);
  });

  test("'off' keeps no live model: nothing to draw, so sends and records cost nothing (issue #33, part 5)", () => {
    const { stream } = fakeStream();
    const view = new LiveView(stream, 'off', { now: () => 0 });
    view.start({ totalRequests: 10 });
    view.onSend();
    view.onRecord(makeRecord());
    assert.deepEqual(view.lines(), []);
    // The same events in 'plain' give the panel's lines: the check above is not empty for want of a model.
    const plain = new LiveView(fakeStream().stream, 'plain', { now: () => 0 });
    plain.start({ totalRequests: 10 });
    plain.onRecord(makeRecord());
    assert.notDeepEqual(plain.lines(), []);
    plain.stop();
  });
});
