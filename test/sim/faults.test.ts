import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/errors/index.js';
import { FaultInjector, parseFaultSpec } from '../../src/sim/faults.js';
import { startSimulator, type SimulatorOptions } from '../../src/sim/index.js';
import type { TraceLine } from '../../src/sim/request-trace.js';
import { openStream, raw, sseEvents } from './sim-http.js';

const STREAM = { messages: [{ role: 'user', content: 'hello' }], max_tokens: 8, stream: true, stream_options: { include_usage: true } };

async function withSim<T>(options: SimulatorOptions, fn: (url: string) => Promise<T>): Promise<T> {
  const sim = await startSimulator(options);
  try {
    return await fn(sim.url);
  } finally {
    await sim.close();
  }
}

describe('fault spec', () => {
  test('parses kinds, rates and params', () => {
    assert.deepEqual(parseFaultSpec('500=0.01, 429=0.02:2,reset=0.01,trickle=0.1:250'), [
      { kind: '500', rate: 0.01 },
      { kind: '429', rate: 0.02, param: 2 },
      { kind: 'reset', rate: 0.01 },
      { kind: 'trickle', rate: 0.1, param: 250 },
    ]);
  });

  test('bad specs are ConfigErrors naming the part and the known kinds', () => {
    for (const [spec, needle] of [
      ['boom=0.1', "'boom'"],
      ['500', "'500'"],
      ['500=2', '2'],
      ['reset=0.1:3', 'reset=0.1:3'],
      ['500=0.6,429=0.6', 'sum'],
      ['500=0.1,500=0.1', 'twice'],
    ] as const) {
      assert.throws(
        () => parseFaultSpec(spec),
        (e: unknown) => e instanceof ConfigError && e.message.includes(needle) && (e.hint === undefined || e.hint.includes('trickle')),
        spec,
      );
    }
    assert.throws(() => parseFaultSpec('boom=0.1'), (e: ConfigError) => e.hint!.includes('malformed'));
  });

  test('the draw is seeded and matches its rate', () => {
    const draws = (seed: number): string => {
      const f = new FaultInjector(parseFaultSpec('500=0.2,reset=0.1'), seed);
      return Array.from({ length: 2000 }, () => f.draw()?.kind ?? '-').join(',');
    };
    assert.equal(draws(7), draws(7));
    assert.notEqual(draws(7), draws(8));
    const n500 = draws(7).split(',').filter((k) => k === '500').length;
    assert.ok(n500 > 300 && n500 < 500, String(n500));
  });
});

describe('faults over HTTP', () => {
  test('500 and 429 (with Retry-After)', { timeout: 10_000 }, async () => {
    await withSim({ faults: '500=1' }, async (url) => {
      const res = await raw(url, '/v1/chat/completions', STREAM);
      assert.equal(res.status, 500);
      assert.equal((JSON.parse(res.body) as { error: { code: number } }).error.code, 500);
    });
    await withSim({ faults: '429=1:2' }, async (url) => {
      const res = await raw(url, '/v1/chat/completions', STREAM);
      assert.equal(res.status, 429);
      assert.equal(res.headers['retry-after'], '2');
    });
  });

  test('reset destroys the socket mid-stream', { timeout: 10_000 }, async () => {
    await withSim({ faults: 'reset=1' }, async (url) => {
      const res = await raw(url, '/v1/chat/completions', STREAM);
      assert.equal(res.status, 200);
      assert.equal(res.complete, false);
      assert.ok(!res.body.includes('[DONE]'));
      const tokens = sseEvents(res.body).filter((e) => (e as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content);
      assert.ok(tokens.length >= 1 && tokens.length <= 4);
    });
  });

  test('truncate ends the stream cleanly but without [DONE]', { timeout: 10_000 }, async () => {
    await withSim({ faults: 'truncate=1' }, async (url) => {
      const res = await raw(url, '/v1/chat/completions', STREAM);
      assert.equal(res.status, 200);
      assert.equal(res.complete, true);
      assert.ok(!res.body.includes('[DONE]'));
      assert.ok(sseEvents(res.body).length >= 2);
    });
  });

  test('malformed sends one data line that is not JSON, then finishes', { timeout: 10_000 }, async () => {
    await withSim({ faults: 'malformed=1' }, async (url) => {
      const res = await raw(url, '/v1/chat/completions', STREAM);
      const events = sseEvents(res.body);
      assert.deepEqual(events.filter((e) => typeof e === 'object' && e !== null && 'malformed' in e), [{ malformed: '{"choices": [' }]);
      assert.equal(events.at(-1), '[DONE]');
      const plain = await raw(url, '/v1/chat/completions', { ...STREAM, stream: false });
      assert.throws(() => JSON.parse(plain.body));
    });
  });

  test('stall sends 200 and headers, then nothing until the client leaves', { timeout: 10_000 }, async () => {
    await withSim({ faults: 'stall=1' }, async (url) => {
      const stream = await openStream(url, '/v1/chat/completions', STREAM, 0);
      assert.equal(stream.status, 200);
      const more = await Promise.race([
        raw(url, '/v1/chat/completions', STREAM).then(() => 'answered'),
        new Promise((r) => setTimeout(() => r('silent'), 300)),
      ]);
      assert.equal(more, 'silent');
      stream.close();
    });
  });

  test('trickle paces tokens at the given interval', { timeout: 10_000 }, async () => {
    await withSim({ faults: 'trickle=1:150' }, async (url) => {
      const sentAtMs = performance.now();
      const res = await raw(url, '/v1/chat/completions', { ...STREAM, max_tokens: 3 });
      assert.ok(res.body.includes('[DONE]'));
      assert.ok(res.chunkTimesMs.length >= 1);
      // Token k leaves at least k x 150 ms after the request (timers never fire early beyond 1 ms rounding), so the
      // last chunk cannot arrive sooner than 3 x 150 ms after it was sent: a lower bound that load cannot break.
      // (The gap between the first and the last chunk is no such bound: a late first read shrinks it.)
      const lastMs = res.chunkTimesMs.at(-1)! - sentAtMs;
      assert.ok(lastMs >= 3 * 150 - 3, `the last chunk came ${lastMs} ms after the request`);
    });
  });

  test('queue full (max_waiting) answers 503 at once', { timeout: 10_000 }, async () => {
    await withSim({ config: { max_num_seqs: 1, max_waiting: 1 } }, async (url) => {
      const long = { messages: [{ role: 'user', content: 'x' }], max_tokens: 5000, stream: true };
      const running = await openStream(url, '/v1/chat/completions', long, 300);
      const waiting = await openStream(url, '/v1/chat/completions', long, 0);
      const rejected = await raw(url, '/v1/chat/completions', long);
      assert.equal(rejected.status, 503);
      assert.equal((JSON.parse(rejected.body) as { error: { code: number } }).error.code, 503);
      running.close();
      waiting.close();
    });
  });
});

describe('trace', () => {
  test('one JSONL line per request, flushed on close', { timeout: 10_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chatload-sim-'));
    try {
      const path = join(dir, 'trace.jsonl');
      await withSim({ tracePath: path, faults: 'reset=0' }, async (url) => {
        assert.equal((await raw(url, '/v1/chat/completions', STREAM)).status, 200);
        assert.equal((await raw(url, '/v1/chat/completions', { messages: [] })).status, 400);
      });
      const lines = (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as TraceLine);
      assert.equal(lines.length, 2);
      const [ok, bad] = lines as [TraceLine, TraceLine];
      assert.equal(ok.status, 200);
      assert.equal(ok.outcome, 'ok');
      assert.equal(ok.tokens_written, 8);
      assert.ok(ok.prompt_tokens > 0);
      assert.ok(ok.arrival_ms > 1.6e12 && ok.first_token_ms! >= ok.arrival_ms && ok.end_ms >= ok.first_token_ms!);
      assert.equal(typeof ok.cached_tokens, 'number');
      assert.equal(bad.status, 400);
      assert.equal(bad.first_token_ms, null);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
