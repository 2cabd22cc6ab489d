import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ChatClient } from '../../src/client/chat-client.js';
import { loadDataset } from '../../src/conversation/load.js';
import { runLoad } from '../../src/load/run-load.js';
import { planRun } from '../../src/options/run-plan.js';
import { defaultTokenCounter } from '../../src/tokenizer/index.js';
import { startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

// What a trace replay puts on the wire, read from the bodies a scripted OpenAI-compatible server received.
const ANSWER = [
  'data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}\n\n',
  'data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}\n\n',
  'data: [DONE]\n\n',
];

describe('trace requests on the wire', () => {
  test('a pre-formatted prompt and its tools go as they are; output_length is max_tokens; a session sends its history', { timeout: 20_000 }, async () => {
    const server = await startScriptedServer({ actions: [...ANSWER.map((write) => ({ write })), { end: true }] });
    const client = new ChatClient({ baseUrl: server.url, connections: 4, requestTimeoutMs: 5_000 });
    try {
      const file = join(tempDir('trace-wire'), 'trace.jsonl');
      const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
      const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello?' }];
      writeFileSync(
        file,
        [
          { timestamp: 0, session_id: 'pre', messages, tools, output_length: 7 },
          { timestamp: 1, session_id: 'hist', input_length: 20, output_length: 3, hash_ids: [5, 8] },
          { session_id: 'hist', delay: 1, input_length: 10, output_length: 4, hash_ids: [6] },
        ]
          .map((row) => JSON.stringify(row))
          .join('\n'),
      );
      const { conversations } = await loadDataset(file, { trace: { blockSize: 16 } });
      const plan = planRun({ url: server.url, inputFile: file });
      const result = await runLoad({
        load: plan.load,
        request: plan.request,
        deadlines: plan.deadlines,
        keepFinishedConversations: false,
        conversations,
        client,
        model: 'm',
        counter: defaultTokenCounter,
      });
      assert.match(result.loadModel, /^fixed-schedule/);
      const bodies = server.requests.map((r) => JSON.parse(r.body) as { messages: { role: string; content: string }[]; tools?: unknown; max_tokens: number });
      assert.equal(bodies.length, 3);
      const pre = bodies.find((b) => b.tools !== undefined)!;
      assert.deepEqual(pre.messages, messages);
      assert.deepEqual(pre.tools, tools);
      assert.equal(pre.max_tokens, 7);
      const hist = bodies.filter((b) => b.tools === undefined);
      assert.deepEqual(hist.map((b) => b.max_tokens), [3, 4]);
      assert.equal(hist[1]!.messages.length, 3, 'turn 2 carries turn 1 and its answer');
      assert.equal(hist[1]!.messages[0]!.content, hist[0]!.messages[0]!.content);
      assert.equal(hist[1]!.messages[1]!.content, 'ok');
      // Synthesised text: 20 and 10 words of one token each.
      assert.equal(hist[0]!.messages[0]!.content.trim().split(' ').length, 20);
      assert.equal(hist[1]!.messages[2]!.content.trim().split(' ').length, 10);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
