// --resume (issue #16): an interrupted run continues in its folder. Finished conversations are skipped; unfinished
// ones restart at their first unanswered turn, with the dataset's recorded answers in the history (the server's
// answers are not on disk). A scripted server records every request, so the test sees exactly what was resent.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { ConfigError } from '../../src/errors/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { syntheticConversations, writeDataset } from '../helpers/datasets.js';
import { MODELS_RESPONSE, SHORT_ANSWER, startScriptedServer, type RecordedRequest } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('resume');
after(() => rmSync(dir, { recursive: true, force: true }));

const CONVERSATIONS = syntheticConversations({ count: 4, userTurns: () => 3 });

/** The chat messages a request sent. */
const messagesOf = (request: RecordedRequest): Array<{ role: string; content: string }> => (JSON.parse(request.body) as { messages: Array<{ role: string; content: string }> }).messages;

describe('--resume', () => {
  test('an interrupted run continues: no answered turn is sent again, resumed histories hold the recorded answers', { timeout: 60_000 }, async () => {
    const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : SHORT_ANSWER));
    try {
      const inputFile = writeDataset(dir, CONVERSATIONS);
      const out = join(dir, 'run');
      const options = { url: server.url, inputFile, outputDir: out, numClients: 2, earlyStop: false, stopGraceSec: 0.2 };
      // Interrupt after 3 records, as SIGINT does: two conversations are then half done.
      const interrupt = new AbortController();
      let seen = 0;
      const first = await runBenchmark(options, { signal: interrupt.signal, observer: { onRecord: () => (++seen === 3 ? interrupt.abort() : undefined) } });
      assert.equal(first.load.stopReason, 'interrupted');
      const before = readRequestsJsonl(join(out, 'requests.jsonl'));
      const answered = new Set(before.filter((r) => r.status === 'ok').map((r) => `${r.conversation_id}#${r.turn}`));
      assert.ok(answered.size >= 3 && answered.size < 12, `the first run answered part of the work (${answered.size})`);
      const posts = server.requests.length;

      const second = await runBenchmark({ ...options, resume: true });
      assert.equal(second.exitCode, 0);
      const records = readRequestsJsonl(join(out, 'requests.jsonl'));
      const ok = records.filter((r) => r.status === 'ok').map((r) => `${r.conversation_id}#${r.turn}`);
      assert.equal(ok.length, 12, 'every turn answered once, over both runs');
      assert.equal(new Set(ok).size, 12, 'no answered turn was sent again');
      const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { summary: { completed: number }; conversations: { total: number; completed: number } };
      assert.equal(results.summary.completed, 12, 'results.json summarizes both runs');
      assert.deepEqual([results.conversations.total, results.conversations.completed], [4, 4]);

      // Each resumed conversation's first request carries the dataset's recorded answers for the turns answered before.
      const resumedPosts = server.requests.slice(posts).filter((r) => r.method === 'POST');
      let midway = 0;
      for (const conversation of CONVERSATIONS) {
        const id = Number(conversation.id.slice('conv-'.length));
        const done = [1, 2, 3].filter((t) => answered.has(`${conversation.id}#${t}`)).length;
        if (done === 0 || done === 3) continue;
        const firstSent = resumedPosts.find((r) => messagesOf(r).at(-1)!.content.startsWith(`conversation ${id} turn ${done}:`));
        assert.ok(firstSent !== undefined, `${conversation.id} resumed at turn ${done + 1}`);
        assert.deepEqual(messagesOf(firstSent).slice(0, -1), conversation.messages.slice(0, 2 * done), `${conversation.id}: recorded history`);
        midway += 1;
      }
      assert.ok(midway > 0, 'at least one conversation restarted mid-way');
      // Times continue the interrupted run's clock.
      const lastBefore = Math.max(...before.map((r) => r.done_at_ms));
      assert.ok(records.slice(before.length).every((r) => r.sent_at_ms >= lastBefore));
    } finally {
      await server.close();
    }
  });

  test('records that do not match the dataset are refused before anything is sent', { timeout: 60_000 }, async () => {
    const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : SHORT_ANSWER));
    try {
      const out = join(dir, 'mismatch');
      await runBenchmark({ url: server.url, inputFile: writeDataset(dir, CONVERSATIONS, 'a.json'), outputDir: out, maxNumRequests: 2 });
      const sent = server.requests.length;
      const other = syntheticConversations({ count: 4, userTurns: () => 3 }).map((c) => ({ ...c, id: `other-${c.id}` }));
      await assert.rejects(
        runBenchmark({ url: server.url, inputFile: writeDataset(dir, other, 'b.json'), outputDir: out, resume: true }),
        (error: unknown) => error instanceof ConfigError && /--resume: .*requests\.jsonl does not match the dataset \(conversation 0 is "other-conv-0"/.test(error.message),
      );
      assert.equal(server.requests.length, sent, 'nothing sent');
    } finally {
      await server.close();
    }
  });

  test('--resume with --overwrite, without --output-dir, or with -o is refused', async () => {
    await Promise.all([
      assert.rejects(runBenchmark({ resume: true, overwrite: true, outputDir: dir }), /give one/),
      assert.rejects(runBenchmark({ resume: true }), /needs the --output-dir/),
      assert.rejects(runBenchmark({ resume: true, outputDir: dir, outputFile: join(dir, 'o.json') }), /answers are not on disk/),
    ]);
  });
});
