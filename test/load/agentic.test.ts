// Agentic replay (issue #14): the server's tool calls go into the history with the recorded results answering its
// call ids; a divergence falls back to the recorded step and is counted; sub-agents fork from the parent's prefix,
// run concurrently, and the parent's next step waits for them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';
import { readFileSync } from 'node:fs';
import { parsedBody, startToolCallServer } from '../helpers/tool-call-server.js';

const tools = [{ type: 'function', function: { name: 'run', parameters: { type: 'object' } } }];
const call = (id: string) => ({ id, type: 'function', function: { name: 'run', arguments: '{"cmd": "x"}' } });

describe('agentic replay', () => {
  test('server tool calls go into the history; recorded results answer its ids; a missing call falls back and is counted', { timeout: 30_000 }, async () => {
    const server = await startToolCallServer();
    const dir = tempDir('agentic');
    try {
      const dataset = [
        {
          id: 'a',
          tools,
          messages: [
            { role: 'system', content: 'agent' },
            { role: 'user', content: 'task CALL 2' },
            { role: 'assistant', content: null, tool_calls: [call('r1'), call('r2')] },
            { role: 'tool', tool_call_id: 'r1', content: 'out one' },
            // The server answers this step with text (no CALL marker) where the dataset recorded a call: a divergence.
            { role: 'tool', tool_call_id: 'r2', content: 'out two' },
            { role: 'assistant', content: null, tool_calls: [call('r3')] },
            { role: 'tool', tool_call_id: 'r3', content: 'out three' },
            { role: 'assistant', content: 'finished' },
          ],
        },
      ];
      const result = await runBenchmark({ url: server.url, inputFile: writeDataset(dir, dataset), outputDir: dir, numClients: 1 });
      assert.equal(result.summary.failed, 0);
      const posts = server.requests.filter((r) => r.method === 'POST').map(parsedBody);
      assert.equal(posts.length, 3);
      assert.deepEqual(posts[0]!.tools, tools);
      // Step 2: the server's own answer with its call ids, then the recorded results answering them.
      const second = posts[1]!.messages;
      assert.deepEqual(second[2]!.tool_calls!.map((c) => c.id), ['srv_0_0', 'srv_0_1']);
      assert.equal(second[2]!.content, null);
      assert.deepEqual(second.slice(3).map((m) => [m.tool_call_id, m.content]), [['srv_0_0', 'out one'], ['srv_0_1', 'out two']]);
      // Step 3: the server answered step 2 in text; the recorded call went into the history with its own result.
      const third = posts[2]!.messages;
      assert.deepEqual(third[5]!.tool_calls!.map((c) => c.id), ['r3']);
      assert.equal(third[6]!.tool_call_id, 'r3');
      const records = readRequestsJsonl(result.files.requests);
      assert.deepEqual(records.map((r) => r.tool_divergence ?? null), [null, 'missing', null]);
      assert.deepEqual(records.map((r) => r.tool_calls ?? 0), [2, 0, 0]);
      assert.ok(records[0]!.tool_call_ms !== null && records[0]!.tool_call_ms! >= 0);
      assert.equal(records[1]!.tool_call_ms, undefined);
      const agentic = resultsJson(result.files.results).agentic as { tool_call_requests: number; tool_calls: number; tool_divergences: Record<string, number> };
      assert.equal(agentic.tool_call_requests, 1);
      assert.equal(agentic.tool_calls, 2);
      assert.deepEqual(agentic.tool_divergences, { missing: 1, unexpected: 0, count: 0 });
    } finally {
      await server.close();
    }
  });

  test('fork/join: children share the parent prefix, run concurrently, and the parent waits for them', { timeout: 30_000 }, async () => {
    // Each reply waits 40 ms, so requests sent together arrive before any is answered.
    const server = await startToolCallServer({ delayMs: 40 });
    const dir = tempDir('agentic-forks');
    try {
      const parent = {
        id: 'p',
        tools,
        messages: [
          { role: 'system', content: 'lead agent' },
          { role: 'user', content: 'plan CALL 1' },
          { role: 'assistant', content: null, tool_calls: [call('spawn')] },
          { role: 'tool', tool_call_id: 'spawn', content: 'sub-agents report: ok' },
          { role: 'assistant', content: 'all done' },
        ],
      };
      // Sub-agents get the parent's tools, as the generator's do: the definitions are the front of every prompt
      // (tokenizer/tools-prompt.ts), so a child without them would share no prefix with its parent.
      const child = (id: string) => ({
        id,
        parent: 'p',
        fork_at: 2,
        tools,
        messages: [
          { role: 'user', content: `${id}: look CALL 1` },
          { role: 'assistant', content: null, tool_calls: [call(`${id}-c`)] },
          { role: 'tool', tool_call_id: `${id}-c`, content: `${id} result` },
          { role: 'assistant', content: `${id} done` },
        ],
      });
      const result = await runBenchmark({ url: server.url, inputFile: writeDataset(dir, [parent, child('k1'), child('k2')]), outputDir: dir, numClients: 1 });
      assert.equal(result.summary.failed, 0);
      assert.equal(result.summary.completed, 6);
      const posts = server.requests.filter((r) => r.method === 'POST').map(parsedBody);
      const lastUser = (i: number): string => String(posts[i]!.messages.find((m, j, all) => m.role === 'user' && all.slice(j + 1).every((n) => n.role !== 'user'))?.content);
      const order = posts.map((_, i) => `${lastUser(i).split(':')[0]}#${posts[i]!.messages.length}`);
      // p#2 (step 1); the two children's first steps (3 messages: prefix of 2 + their task), then their second
      // steps (5 messages), and only then the parent's second step (4 messages).
      assert.equal(order[0], 'plan CALL 1#2');
      assert.deepEqual(order.slice(1, 3).sort(), ['k1#3', 'k2#3']);
      assert.deepEqual(order.slice(3, 5).sort(), ['k1#5', 'k2#5']);
      assert.equal(order[5], 'plan CALL 1#4');
      // The children's requests start with the parent's prompt of the fork step: the shared prefix.
      for (const i of [1, 2]) assert.deepEqual(posts[i]!.messages.slice(0, 2), posts[0]!.messages);
      const records = readRequestsJsonl(result.files.requests);
      const kids = records.filter((r) => r.parent_conversation_id === 'p');
      assert.equal(kids.length, 4);
      // A child's first request could reuse the parent's whole prompt: by its own history, the parent's prompt as the
      // server counted it (usage said 100 + 10 per message); by the global block index, the full blocks of that
      // prompt as the local tokenizer renders it, which the parent's request put there.
      const parentFirst = records.find((r) => r.conversation_id === 'p' && r.turn === 1)!;
      for (const r of kids.filter((k) => k.turn === 1)) {
        assert.equal(r.expected_cached_tokens_own_history, 120);
        assert.ok(r.expected_cached_tokens > 0 && r.expected_cached_tokens % 16 === 0, `block-aligned shared prefix, got ${r.expected_cached_tokens}`);
        assert.equal(parentFirst.expected_cached_tokens, 0, 'the parent found nothing before it');
      }
      assert.equal((resultsJson(result.files.results).agentic as { sub_agent_requests: number }).sub_agent_requests, 4);
    } finally {
      await server.close();
    }
  });
});

function resultsJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}
