// The fault matrix, part 1: whole runs (runBenchmark, as `chatload run` does it) against the simulator's fault
// injection and a scripted HTTP server. Every case checks that the run ends (each test bounds its own time), that the
// failures are recorded with their class, that every completed request is on disk, and the documented exit code.
// Part 2 (fault-matrix-raw.test.ts) covers what needs a raw socket or a killed process.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { formatSummary } from '../../src/report/terminal.js';
import { startSimulator } from '../../src/sim/index.js';
import { kindsSeen, runMatrixCase } from '../helpers/matrix.js';
import { jsonStatus, MODELS_RESPONSE, SHORT_ANSWER, sseEvent, startScriptedServer, usageChunkJson } from '../helpers/scripted-server.js';
import { readZipEntries } from '../helpers/zip.js';

/** A simulator fault at rate 0.5 (seeded, one client: the same requests fail every time) and the kind it must give. */
interface SimFaultCase {
  fault: string;
  kind: string;
  options?: Record<string, unknown>;
  answerWords?: number;
}

const SIM_CASES: SimFaultCase[] = [
  { fault: '500=0.5', kind: 'http_status' },
  { fault: 'reset=0.5', kind: 'connect_reset' },
  // A stall after the headers: only the idle timeout can end it.
  { fault: 'stall=0.5', kind: 'timeout_idle', options: { idleTimeoutSec: 0.3, requestTimeoutSec: 10 } },
  // One token per 100 ms never goes idle, but 30+ tokens take longer than the 1 s total.
  { fault: 'trickle=0.5:100', kind: 'timeout_total', options: { requestTimeoutSec: 1 }, answerWords: 30 },
  { fault: 'malformed=0.5', kind: 'malformed_stream' },
  { fault: 'truncate=0.5', kind: 'truncated_stream' },
];

describe('fault matrix: simulator faults through a whole run', () => {
  for (const c of SIM_CASES) {
    test(`${c.fault}: failures are ${c.kind}, completed requests are on disk, exit 1`, { timeout: 30_000 }, async () => {
      const sim = await startSimulator({ profile: 'cpu-tiny', seed: 3, faults: c.fault });
      try {
        const { result, records } = await runMatrixCase(sim.url, { conversations: 4, userTurns: 3, answerWords: c.answerWords }, c.options);
        assert.deepEqual(kindsSeen(result), [c.kind]);
        assert.ok(result.summary.failed >= 1, 'some requests failed');
        assert.ok(result.summary.completed >= 1, 'some requests completed');
        // Without retries a failure ends its conversation; the others go on and every conversation is accounted for.
        const conv = result.load.conversations;
        assert.equal(conv.completed + conv.failed + conv.unfinished + conv.not_started, 4);
        assert.equal(conv.failed, result.summary.failed);
        assert.equal(result.load.stopReason === 'interrupted', false);
        assert.equal(result.exitCode, 1);
        for (const r of records.filter((x) => x.status === 'error')) assert.equal(r.error_kind, c.kind);
      } finally {
        await sim.close();
      }
    });
  }

  test('the same faults within --max-error-rate 1 exit 0', { timeout: 30_000 }, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny', seed: 3, faults: '500=0.5' });
    try {
      const { result } = await runMatrixCase(sim.url, { conversations: 4, userTurns: 3 }, { maxErrorRate: 1 });
      assert.ok(result.summary.failed >= 1);
      assert.equal(result.exitCode, 0);
    } finally {
      await sim.close();
    }
  });

  test('retried faults (reset, truncate, 500) end as completed requests with their retries counted', { timeout: 30_000 }, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny', seed: 5, faults: 'reset=0.2,truncate=0.2,500=0.2' });
    try {
      const { result, records } = await runMatrixCase(sim.url, { conversations: 4, userTurns: 3 }, { maxRetries: 8 });
      // 8 retries at a fault rate of 0.6: a request fails for good with probability 0.6^9 ≈ 1%; the seed fixes it.
      assert.equal(result.summary.failed, 0);
      assert.equal(result.summary.completed, 12);
      assert.ok(records.some((r) => r.retries > 0), 'some requests needed retries');
      assert.equal(result.exitCode, 0);
    } finally {
      await sim.close();
    }
  });
});


describe('fault matrix: HTTP status answers through a whole run', () => {
  test('429 with Retry-After: 1 is retried no sooner than the server asked, and the record counts the retry', { timeout: 30_000 }, async () => {
    const chatTimesMs: number[] = [];
    const server = await startScriptedServer((request) => {
      if (request.method === 'GET') return MODELS_RESPONSE;
      chatTimesMs.push(performance.now());
      return chatTimesMs.length === 1 ? jsonStatus(429, { 'retry-after': '1' }) : SHORT_ANSWER;
    });
    try {
      const { result, records } = await runMatrixCase(server.url, { conversations: 1, userTurns: 1 }, { maxRetries: 2 });
      assert.equal(result.summary.completed, 1);
      assert.equal(result.summary.failed, 0);
      assert.equal(records[0]!.retries, 1);
      // A lower bound set by the code (Retry-After is the floor of the backoff), not by machine speed.
      assert.ok(chatTimesMs[1]! - chatTimesMs[0]! >= 990, `retried after ${(chatTimesMs[1]! - chatTimesMs[0]!).toFixed(0)} ms`);
      assert.equal(result.exitCode, 0);
    } finally {
      await server.close();
    }
  });

  // Issue #35, item 3: a Retry-After past setTimeout's 2^31 ms fired after 1 ms, so a 30-day one was retried 5 times in
  // 11 ms. The wait is honoured now, and the run's own deadline (--benchmark-timeout-sec) is what ends it.
  test('429 with a 30-day Retry-After is not retried at once: the run waits, and its deadline ends the wait', { timeout: 30_000 }, async () => {
    const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : jsonStatus(429, { 'retry-after': String(30 * 24 * 3600) })));
    try {
      const { result, records } = await runMatrixCase(server.url, { conversations: 1, userTurns: 2 }, { maxRetries: 5, benchmarkTimeoutSec: 1.5 });
      assert.equal(server.requests.filter((r) => r.method === 'POST').length, 1, 'sent once: the retry waits for the 30 days');
      assert.equal(result.load.stopReason, 'benchmark_timeout');
      assert.equal(records.length, 1);
      assert.equal(records[0]!.http_status, 429);
    } finally {
      await server.close();
    }
  });

  test('429 that persists past --max-retries is recorded as http_status 429, exit 1', { timeout: 30_000 }, async () => {
    const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : jsonStatus(429, { 'retry-after': '0' })));
    try {
      const { result, records } = await runMatrixCase(server.url, { conversations: 1, userTurns: 2 }, { maxRetries: 2 });
      assert.equal(result.summary.failed, 1);
      assert.equal(records[0]!.http_status, 429);
      assert.equal(records[0]!.error_kind, 'http_status');
      assert.equal(records[0]!.retries, 2);
      assert.equal(server.requests.filter((r) => r.method === 'POST').length, 3);
      assert.equal(result.exitCode, 1);
    } finally {
      await server.close();
    }
  });

  for (const code of [400, 401, 403, 404, 413, 422]) {
    test(`HTTP ${code} is http_status, not retried, body excerpt kept`, { timeout: 30_000 }, async () => {
      const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : jsonStatus(code)));
      try {
        const { result, records } = await runMatrixCase(server.url, { conversations: 2, userTurns: 1 }, { maxRetries: 3 });
        assert.equal(result.summary.failed, 2);
        assert.deepEqual(kindsSeen(result), ['http_status']);
        assert.equal(server.requests.filter((r) => r.method === 'POST').length, 2, 'no retries');
        for (const r of records) {
          assert.equal(r.http_status, code);
          assert.match(r.error!, new RegExp(`HTTP ${code}: .*status ${code}`));
        }
      } finally {
        await server.close();
      }
    });
  }

  for (const code of [500, 502, 503, 504]) {
    test(`HTTP ${code} is http_status and retryable`, { timeout: 30_000 }, async () => {
      let chats = 0;
      const server = await startScriptedServer((request) => {
        if (request.method === 'GET') return MODELS_RESPONSE;
        chats += 1;
        return chats === 1 ? jsonStatus(code, { 'retry-after': '0' }) : SHORT_ANSWER;
      });
      try {
        const { result, records } = await runMatrixCase(server.url, { conversations: 1, userTurns: 1 }, { maxRetries: 1 });
        assert.equal(result.summary.completed, 1);
        assert.equal(records[0]!.retries, 1);
      } finally {
        await server.close();
      }
    });
  }
});

describe('fault matrix: a server that answers nothing', () => {
  test('only `choices: []` then [DONE]: empty_answer, warned once, counted in the summary, the terminal, HTML and Excel; exit 1', { timeout: 30_000 }, async () => {
    const empty = { actions: [{ write: sseEvent({ choices: [] }) + sseEvent(usageChunkJson(7, 0)) + sseEvent('[DONE]') }, { end: true as const }] };
    const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : empty));
    try {
      const warnings: string[] = [];
      const { result } = await runMatrixCase(
        server.url,
        { conversations: 3, userTurns: 2 },
        { report: true, excelOutput: true },
        { observer: { onWarning: (message) => warnings.push(message) } },
      );
      assert.equal(result.summary.completed, 0, 'an empty answer is not a success');
      assert.equal(result.summary.failed_by_kind.empty_answer, 3);
      assert.deepEqual(kindsSeen(result), ['empty_answer']);
      assert.equal(warnings.filter((w) => /answered with no content/.test(w)).length, 1, warnings.join('\n'));
      assert.equal(result.exitCode, 1);
      const terminal = formatSummary({ summary: result.summary, perTurn: result.perTurn, clientHealth: null, title: 't' }, { color: false });
      assert.match(terminal, /empty_answer 3/);
      assert.match(readFileSync(result.files.html!, 'utf8'), /empty_answer/);
      const workbook = readZipEntries(readFileSync(result.files.excel!)).map((entry) => entry.data.toString('utf8')).join('\n');
      assert.match(workbook, /failed_empty_answer/);
    } finally {
      await server.close();
    }
  });
});
