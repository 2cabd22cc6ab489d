// The fault matrix, part 2: what an HTTP library will not produce (a raw TCP server), a server process killed
// mid-run, connection refused and DNS failure. Same invariants as part 1 (see helpers/matrix.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatClient } from '../../src/client/chat-client.js';
import { isRetryable } from '../../src/client/retry.js';
import { runCli } from '../helpers/cli.js';
import { chatRequest, failingLookup } from '../helpers/client-test-utils.js';
import { kindsSeen, runMatrixCase } from '../helpers/matrix.js';
import { SSE_HEAD_CLOSE_DELIMITED, modelsResponse, startRawServer, type RawHandler } from '../helpers/raw-server.js';
import { chunkJson, sseEvent, usageChunkJson } from '../helpers/scripted-server.js';
import { startServeProcess } from '../helpers/serve-process.js';
import { tempDir } from '../helpers/tmp.js';
import { stopText } from '../../src/report/stop-text.js';

/** A complete streamed answer, close-delimited (Connection: close), so every request opens a fresh connection. */
const FULL_ANSWER =
  SSE_HEAD_CLOSE_DELIMITED +
  sseEvent(chunkJson({ role: 'assistant', content: 'ok' })) +
  sseEvent(chunkJson({ content: ' done' }, 'stop')) +
  sseEvent(usageChunkJson(10, 2)) +
  sseEvent('[DONE]');

/** Answers /v1/models, then hands chat requests (numbered from 0) to `chat`. */
function withModels(chat: (index: number, ...rest: Parameters<RawHandler>) => void): RawHandler {
  let chats = 0;
  return (request, socket, later) => {
    if (request.method === 'GET') socket.write(modelsResponse());
    else chat(chats++, request, socket, later);
  };
}

describe('fault matrix: raw sockets', () => {
  test('a server that accepts and never answers: timeout_ttft, and the run ends', { timeout: 20_000 }, async () => {
    const server = await startRawServer(withModels(() => {}));
    try {
      const { result } = await runMatrixCase(server.url, { conversations: 2, userTurns: 2 }, { ttftTimeoutSec: 0.3 });
      assert.deepEqual(kindsSeen(result), ['timeout_ttft']);
      assert.equal(result.summary.failed, 2, 'each conversation fails once and ends');
      assert.equal(result.exitCode, 1);
    } finally {
      await server.close();
    }
  });

  test('a server that accepts and never reads: the CLI gives up after --ready-timeout-sec, one line, exit 1', { timeout: 30_000 }, async () => {
    const server = await startRawServer(() => {}, { neverRead: true });
    try {
      const result = await runCli(['run', '-u', server.url, '--ready-timeout-sec', '0.5', '--output-dir', tempDir('never-read')]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr.trim(), /^chatload: cannot reach the server at http:\/\/127\.0\.0\.1:\d+: not ready within 500 ms/);
      assert.equal(result.stderr.trim().split('\n').length, 1);
      assert.ok(server.connections >= 1);
    } finally {
      await server.close();
    }
  });

  test('connection refused mid-run: connect_refused, the requests before it on disk', { timeout: 20_000 }, async () => {
    const server = await startRawServer(
      withModels((index, _request, socket) => {
        socket.end(FULL_ANSWER);
        // After the third answer nothing listens any more: the next connect is refused.
        if (index === 2) void server.stopListening();
      }),
    );
    try {
      const { result, records } = await runMatrixCase(server.url, { conversations: 3, userTurns: 2 });
      assert.equal(result.summary.completed, 3);
      assert.deepEqual(kindsSeen(result), ['connect_refused']);
      assert.deepEqual(records.slice(0, 3).map((r) => r.status), ['ok', 'ok', 'ok']);
      assert.equal(result.exitCode, 1);
    } finally {
      await server.close();
    }
  });

  test('a close-delimited stream that ends without [DONE]: truncated_stream, the partial answer kept', { timeout: 20_000 }, async () => {
    const server = await startRawServer(
      withModels((_i, _request, socket) => socket.end(SSE_HEAD_CLOSE_DELIMITED + sseEvent(chunkJson({ role: 'assistant', content: 'partial' })))),
    );
    try {
      const { result, records } = await runMatrixCase(server.url, { conversations: 1, userTurns: 2 });
      assert.deepEqual(kindsSeen(result), ['truncated_stream']);
      assert.equal(records[0]!.output_num_chunks, 1, 'the chunk that came is counted');
    } finally {
      await server.close();
    }
  });

  test('a JSON body cut short of its Content-Length: connect_reset (retryable)', { timeout: 20_000 }, async () => {
    const server = await startRawServer(
      withModels((_i, _request, socket) => {
        const head = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n';
        socket.end(`${head}{"choices":[{"message":{"content":"cut`);
      }),
    );
    try {
      const { result } = await runMatrixCase(server.url, { conversations: 1, userTurns: 1 }, { stream: false });
      assert.deepEqual(kindsSeen(result), ['connect_reset']);
    } finally {
      await server.close();
    }
  });

  test('garbage instead of a status line: other, one line, the run goes on', { timeout: 20_000 }, async () => {
    const server = await startRawServer(withModels((_i, _request, socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n')));
    try {
      const { result, records } = await runMatrixCase(server.url, { conversations: 2, userTurns: 1 });
      assert.equal(result.summary.failed, 2);
      assert.equal(records.length, 2);
      assert.deepEqual(kindsSeen(result), ['other']);
      assert.match(records[0]!.error!, /does not match the HTTP\/1\.1 protocol/);
    } finally {
      await server.close();
    }
  });

  test('an oversized stream event (65 MiB without a line break): other, the socket is dropped, the run ends', { timeout: 30_000 }, async () => {
    const MiB = 1024 * 1024;
    const block = Buffer.alloc(MiB, 'x');
    let onServerClose: () => void = () => {};
    const serverSawClose = new Promise<boolean>((resolve) => {
      onServerClose = () => resolve(true);
      setTimeout(() => resolve(false), 5_000).unref();
    });
    const server = await startRawServer(
      withModels((_i, _request, socket, later) => {
        socket.on('close', onServerClose);
        socket.write(`${SSE_HEAD_CLOSE_DELIMITED}data: {"choices":[{"delta":{"content":"`);
        let sent = 0;
        const pump = (): void => {
          while (sent < 65 && !socket.destroyed) {
            sent += 1;
            if (!socket.write(block)) {
              socket.once('drain', pump);
              return;
            }
          }
          if (!socket.destroyed) later(0, () => socket.end('"}}]}\n\n'));
        };
        pump();
      }),
    );
    try {
      const { result, records } = await runMatrixCase(server.url, { conversations: 1, userTurns: 1 });
      assert.deepEqual(kindsSeen(result), ['other']);
      assert.match(records[0]!.error!, /exceeds \d+ characters/);
      assert.ok(await serverSawClose, 'the client closed the connection');
    } finally {
      await server.close();
    }
  });
});

describe('fault matrix: a real server process killed mid-run', () => {
  test('SIGKILL of chatload serve: the run ends with connect_* errors, every completed request on disk, exit 1', { timeout: 60_000 }, async () => {
    const serve = await startServeProcess(['--profile', 'cpu-tiny', '--seed', '1']);
    try {
      let completed = 0;
      let completedAtKill = -1;
      const { result, records } = await runMatrixCase(
        serve.url,
        // Answers of 60 tokens keep requests in flight for a while, so the kill lands mid-stream for some.
        { conversations: 40, userTurns: 5, answerWords: 60 },
        { numClients: 4, requestTimeoutSec: 10 },
        {
          observer: {
            onRecord: (record) => {
              if (record.status === 'ok') completed += 1;
              if (completedAtKill < 0 && completed === 8) {
                completedAtKill = completed;
                void serve.kill();
              }
            },
          },
        },
      );
      assert.ok(completedAtKill >= 0, 'the server was killed during the run');
      const kinds = kindsSeen(result);
      assert.ok(kinds.length >= 1, 'requests failed after the kill');
      for (const kind of kinds) assert.ok(['connect_refused', 'connect_reset'].includes(kind), `kind ${kind}`);
      assert.ok(result.summary.completed >= completedAtKill, 'the requests before the kill completed');
      // Every conversation still in play failed once (no retries); none is silently dropped.
      const conv = result.load.conversations;
      assert.equal(conv.completed + conv.failed + conv.unfinished + conv.not_started, 40);
      assert.ok(conv.failed >= 1);
      assert.equal(records.filter((r) => r.status === 'ok').length, result.summary.completed);
      assert.equal(result.exitCode, 1);
      // The heading never says "(completed)" for it (issue #34): every conversation ended, but by failing.
      const said = stopText(result.load.stopReason, conv);
      assert.notEqual(said, 'completed');
      if (result.load.stopReason === 'completed') assert.equal(said, `ended: ${conv.failed} of 40 conversations failed`);
    } finally {
      await serve.kill();
    }
  });
});

describe('fault matrix: DNS failure (client level, no query leaves the machine)', () => {
  // This machine resolves through a nameserver off the machine (nsswitch "files mdns4_minimal dns"), so even a
  // `.invalid` name would send a query. DNS failure is therefore tested with ChatClient's `lookup` option only.
  for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL']) {
    test(`${code} from the resolver is dns, one line, not retried`, { timeout: 10_000 }, async () => {
      const lookup = failingLookup(code);
      const client = new ChatClient({ baseUrl: 'http://nonexistent.invalid:8000', connections: 1, requestTimeoutMs: 2_000, lookup });
      try {
        const result = await client.send(chatRequest());
        assert.equal(result.error?.kind, 'dns');
        assert.equal(isRetryable(result.error), false);
        assert.ok(!/[\r\n]/.test(result.error.message));
        // An unknown host ends the readiness wait at once as bad input (issue #34); EAI_AGAIN, a resolver's hiccup, is waited on.
        if (code === 'EAI_AGAIN') await assert.rejects(client.waitReady(300), /cannot reach the server at http:\/\/nonexistent\.invalid:8000: not ready within 300 ms/);
        else await assert.rejects(client.waitReady(60_000), new RegExp(`cannot reach the server at http://nonexistent\\.invalid:8000: its host name does not resolve \\(${code}\\)`));
      } finally {
        await client.close();
      }
    });
  }
});

