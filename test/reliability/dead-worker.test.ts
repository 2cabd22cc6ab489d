// A worker thread that dies mid-run under --workers (issue #35, item 2): the run still ends with its files, the dead
// part's conversations counted (those it saw complete as completed, the rest as failed), a warning naming it and the
// requests it lost in flight, and every request the server received either a record or counted as lost.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { runCli } from '../helpers/cli.js';
import { syntheticConversations } from '../helpers/datasets.js';
import { startFixedTimingServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

test('a worker that dies under --workers 2: the run finishes, counts its conversations, and writes every file', { timeout: 90_000 }, async () => {
  const server = await startFixedTimingServer({ ttftMs: 5, itlMs: 2, tokens: 10 });
  const dir = tempDir('dead-worker');
  const turns = 4;
  const total = 40;
  try {
    const input = join(dir, 'in.json');
    writeFileSync(input, JSON.stringify(syntheticConversations({ count: total, userTurns: () => turns })));
    const out = join(dir, 'run');
    // Part 1 ends its thread abruptly once it has posted 10 records (the fault hook in part-worker.ts).
    const result = await runCli(['run', '-u', server.url, '-i', input, '-p', '4', '--workers', '2', '--output-dir', out], {
      env: { CHATLOAD_TEST_KILL_PART: '1:10' },
      timeoutMs: 80_000,
    });
    assert.doesNotMatch(result.stderr, /internal error|at .*\.js:\d+/, result.stderr);
    const warning = /worker 1 failed \(exit code 70\); its conversations that had not ended are counted as failed(?:; (\d+) requests? in flight (?:was|were) lost with it)?/.exec(result.stderr);
    assert.ok(warning, result.stderr);
    const lostInFlight = Number(warning[1] ?? 0);

    for (const file of ['results.json', 'requests.jsonl', 'report.html']) assert.ok(existsSync(join(out, file)), `${file} was written`);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { conversations: Record<string, number> };
    const records = readRequestsJsonl(join(out, 'requests.jsonl'));
    // The conversations whose last turn has an answered record are the completed ones, the dead part's included.
    const completed = new Set(records.filter((r) => r.turn === turns && r.status === 'ok').map((r) => r.conversation_id));
    const counts = results.conversations;
    assert.equal(counts.total, total);
    assert.equal(counts.completed, completed.size, JSON.stringify(counts));
    assert.equal(counts.completed! + counts.failed! + counts.unfinished! + counts.not_started!, total);
    assert.ok(counts.failed! > 0, 'the dead part left conversations unfinished');
    // The other part carried on: more records than the dead part posted before dying.
    assert.ok(records.length > 10, `${records.length} records`);
    // Every chat request the server received is a record or one of the requests the warning counts as lost.
    assert.ok(server.chatBodies.length <= records.length + lostInFlight, `server ${server.chatBodies.length}, records ${records.length}, lost ${lostInFlight}`);
    assert.ok(server.chatBodies.length >= records.length, `server ${server.chatBodies.length}, records ${records.length}`);
  } finally {
    await server.close();
  }
});
