// A server whose body goes on after `data: [DONE]` and never ends (issue #35, item 4). Seen from servers that keep
// the response open after the last event. The stream is complete at [DONE]: the record ends there, and the next
// request must not wait behind the drained connection (AFTER_DONE_GRACE_MS, 2 s) with its TTFT clock running.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { runCli } from '../helpers/cli.js';
import { syntheticConversations } from '../helpers/datasets.js';
import { chunkJson, sseEvent, usageChunkJson } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

test('a body that never ends after [DONE]: the next request goes at once, not after the drain grace', { timeout: 60_000 }, async () => {
  const open = new Set<ServerResponse>();
  /** For each chat request after the first: was the previous response's connection still open when it arrived? */
  const previousStillOpen: boolean[] = [];
  let previous: ServerResponse | undefined;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'm', max_model_len: 4096 }] }));
      return;
    }
    if (!req.url?.startsWith('/v1/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no route"}}');
      return;
    }
    req.resume();
    req.on('end', () => {
      if (previous !== undefined) previousStillOpen.push(!previous.socket?.destroyed && !previous.writableFinished && open.has(previous));
      previous = res;
      open.add(res);
      res.on('close', () => open.delete(res));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Every event, then [DONE], and the chunked body is never ended.
      res.write(sseEvent(chunkJson({ content: 'a' })) + sseEvent(chunkJson({ content: ' b' }, 'stop')) + sseEvent(usageChunkJson(5, 2)) + 'data: [DONE]\n\n');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const dir = tempDir('after-done');
  try {
    const input = join(dir, 'in.json');
    writeFileSync(input, JSON.stringify(syntheticConversations({ count: 1, userTurns: () => 4 })));
    const out = join(dir, 'run');
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const result = await runCli(['run', '-u', url, '-i', input, '-p', '1', '--no-report', '--output-dir', out], { timeoutMs: 50_000 });
    assert.equal(result.code, 0, result.stderr);
    const records = readRequestsJsonl(join(out, 'requests.jsonl'));
    assert.deepEqual(
      records.map((r) => [r.turn, r.status]),
      [[1, 'ok'], [2, 'ok'], [3, 'ok'], [4, 'ok']],
    );
    // Before, each next request waited for the drained connection to be cut: it arrived after that connection closed.
    assert.deepEqual(previousStillOpen, [true, true, true], 'each next request arrived while the previous body was still being drained');
  } finally {
    for (const res of open) res.destroy();
    server.closeAllConnections();
    server.close();
  }
});
