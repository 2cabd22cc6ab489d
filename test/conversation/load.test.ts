import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { demoConversations, loadConversations } from '../../src/conversation/index.js';
import { ConfigError, DatasetError } from '../../src/errors/index.js';

const dir = mkdtempSync(join(tmpdir(), 'chatload-load-'));
let n = 0;
function file(content: string, ext = 'json'): string {
  const path = join(dir, `f${n++}.${ext}`);
  writeFileSync(path, content);
  return path;
}

async function loadError(path: string): Promise<DatasetError | ConfigError> {
  try {
    await loadConversations(path);
  } catch (error) {
    assert.ok(error instanceof DatasetError || error instanceof ConfigError, `unexpected error ${String(error)}`);
    assert.equal(error.exitCode, 2);
    assert.ok(!error.message.includes('\n'), 'one line');
    return error;
  }
  assert.fail('expected the load to fail');
}

const good = [
  { id: 'a', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'bye' }] },
  { id: 'b', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] },
];

describe('loadConversations', () => {
  test('reads the reference JSON list, with a leading system message', async () => {
    const conversations = await loadConversations(file(JSON.stringify(good)));
    assert.equal(conversations.length, 2);
    assert.equal(conversations[0]!.messages[0]!.role, 'system');
    assert.deepEqual(conversations[1], good[1]);
  });

  test('reads JSONL, one conversation per line, skipping blank lines', async () => {
    const conversations = await loadConversations(file(`${JSON.stringify(good[0])}\n\n${JSON.stringify(good[1])}\n`, 'jsonl'));
    assert.deepEqual(conversations.map((c) => c.id), ['a', 'b']);
  });

  test('malformed JSON names the line and column', async () => {
    const error = await loadError(file('[\n  {"id": "a",\n   "messages": [}\n]'));
    assert.match(error.message, /f\d+\.json, line 3, column \d+: invalid JSON/);
  });

  test('malformed JSONL names the line', async () => {
    const error = await loadError(file(`${JSON.stringify(good[0])}\n{"id": "b", "messages": [\n`, 'jsonl'));
    assert.match(error.message, /line 2, column \d+: invalid JSON/);
  });

  test('schema violations name the conversation, its id and the message', async () => {
    const bad = [good[1], { id: 'c', messages: [{ role: 'user', content: 'x' }, { role: 'user', content: 'y' }] }];
    const error = await loadError(file(JSON.stringify(bad)));
    assert.match(error.message, /conversation 1 \(id "c"\), message 1: expected role "assistant".*got "user"/);
  });

  test('a message without string content', async () => {
    const error = await loadError(file(JSON.stringify([{ id: 'x', messages: [{ role: 'user', content: 3 }] }])));
    assert.match(error.message, /conversation 0 \(id "x"\), message 0: expected "content" to be a string or a list of content parts, got 3$/);
  });

  test('unknown role, missing id, empty messages, duplicate ids, system not first', async () => {
    assert.match((await loadError(file(JSON.stringify([{ id: 'x', messages: [{ role: 'bot', content: '' }] }])))).message, /expected "role"/);
    assert.match((await loadError(file(JSON.stringify([{ messages: [] }])))).message, /conversation 0: expected "id" to be a string, got nothing/);
    assert.match((await loadError(file(JSON.stringify([{ id: 'x', messages: [] }])))).message, /empty "messages"/);
    assert.match((await loadError(file(JSON.stringify([good[1], good[1]])))).message, /conversation 1 \(id "b"\): duplicate id/);
    const late = [{ id: 'x', messages: [{ role: 'user', content: 'a' }, { role: 'system', content: 'b' }] }];
    assert.match((await loadError(file(JSON.stringify(late)))).message, /message 1: a "system" message is allowed only as the first message/);
  });

  test('empty files, empty lists, missing files, non-list JSON', async () => {
    assert.match((await loadError(file(''))).message, /the file is empty/);
    assert.match((await loadError(file('[]'))).message, /empty list/);
    assert.match((await loadError(file('', 'jsonl'))).message, /no conversations/);
    assert.match((await loadError(join(dir, 'missing.json'))).message, /missing\.json: cannot read the file: no such file/);
    assert.match((await loadError(file('{"a": 1}'))).message, /expected a JSON list of conversations/);
  });

  test('a generation config generates conversations (built-in corpus, approximate tokenizer by default)', async () => {
    const config = {
      filetype: 'generate_conversations',
      num_conversations: 3,
      prompt_input: { num_turns: { distribution: 'constant', value: 4 }, num_tokens: { distribution: 'constant', value: 60 } },
      prompt_output: { num_tokens: { distribution: 'constant', value: 20 } },
    };
    const warnings: string[] = [];
    const conversations = await loadConversations(file(JSON.stringify(config)), { seed: 1, warn: (m) => warnings.push(m) });
    assert.deepEqual(conversations.map((c) => c.id), ['CONV_ID_0', 'CONV_ID_1', 'CONV_ID_2']);
    for (const c of conversations) {
      assert.deepEqual(c.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
      assert.deepEqual(c.turns?.map((t) => t.maxTokens), [20, 20]);
      for (const m of c.messages) assert.deepEqual(Object.keys(m), ['role', 'content']);
    }
    assert.match(warnings.join('\n'), /approximate tokenizer/);
  });

  test('a bad generation config is a ConfigError naming the key', async () => {
    const error = await loadError(file(JSON.stringify({ filetype: 'generate_conversations', num_conversations: 2 })));
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /prompt_input: expected an object/);
  });
});

describe('demoConversations', () => {
  test('is deterministic for a seed and valid', async () => {
    const a = demoConversations({ seed: 1, conversations: 5 });
    assert.deepEqual(a, demoConversations({ seed: 1, conversations: 5 }));
    assert.notDeepEqual(a, demoConversations({ seed: 2, conversations: 5 }));
    const loaded = await loadConversations(file(JSON.stringify(a)));
    assert.deepEqual(loaded, a);
    for (const c of a) assert.equal(c.messages[0]!.role, 'system');
  });
});
