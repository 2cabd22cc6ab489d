import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConversations } from '../../src/conversation/index.js';
import { writeConversations } from '../../src/conversation/write.js';
import { DatasetError } from '../../src/errors/index.js';
import { messageText } from '../../src/tokenizer/content.js';

const dir = mkdtempSync(join(tmpdir(), 'chatload-tools-'));
let n = 0;
function file(value: unknown, ext = 'json'): string {
  const path = join(dir, `f${n++}.${ext}`);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

async function loadError(path: string): Promise<string> {
  try {
    await loadConversations(path);
  } catch (error) {
    assert.ok(error instanceof DatasetError, `unexpected error ${String(error)}`);
    assert.ok(!error.message.includes('\n'), 'one line');
    return error.message;
  }
  assert.fail('expected the load to fail');
}

const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
const call = (id: string, path: string) => ({ id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path }) } });

/** An agentic session: a user task, two tool steps (one with parallel calls), then a text answer. */
const agentic = {
  id: 'agent-1',
  tools,
  messages: [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: [{ type: 'text', text: 'Fix the bug' }, { type: 'text', text: 'in src/a.ts' }] },
    { role: 'assistant', content: null, tool_calls: [call('c1', 'src/a.ts')] },
    { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' },
    { role: 'assistant', content: 'Reading both.', tool_calls: [call('c2', 'b.ts'), call('c3', 'c.ts')], max_tokens: 20 },
    { role: 'tool', tool_call_id: 'c3', content: 'c', think_time_sec: 0.5 },
    { role: 'tool', tool_call_id: 'c2', content: 'b' },
    { role: 'assistant', content: 'Done.' },
  ],
};

describe('tool-calling datasets', () => {
  test('an assistant message with tool_calls and null content loads (it failed with "content … got null")', async () => {
    const [c] = await loadConversations(file([agentic]));
    assert.equal(c!.messages.length, 8);
    assert.deepEqual(c!.tools, tools);
    assert.equal(c!.messages[2]!.content, '');
    assert.equal(c!.messages[2]!.tool_calls![0]!.function.name, 'read_file');
    assert.equal(c!.messages[3]!.tool_call_id, 'c1');
    // Text parts: kept as parts for the wire; their text (joined) is what local counts see.
    assert.deepEqual(c!.messages[1]!.content, [{ type: 'text', text: 'Fix the bug' }, { type: 'text', text: 'in src/a.ts' }]);
    assert.equal(messageText(c!.messages[1]!.content), 'Fix the bugin src/a.ts');
    // One step per request: the user turn, then each group of tool results.
    assert.deepEqual(c!.turns, [{}, { maxTokens: 20 }, { thinkTimeSec: 0.5 }]);
  });

  test('image_url parts pass through and add no text', async () => {
    const image = { id: 'i', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'text', text: 'what is it?' }] }] };
    const [c] = await loadConversations(file([image]));
    assert.equal(messageText(c!.messages[0]!.content), 'what is it?');
    assert.equal((c!.messages[0]!.content as Array<{ type: string }>)[0]!.type, 'image_url');
  });

  test('written back, a tool-calling dataset reads the same', async () => {
    const conversations = await loadConversations(file([agentic]));
    const out = join(dir, 'round.json');
    await writeConversations(out, conversations);
    const written = JSON.parse(readFileSync(out, 'utf8')) as Array<{ messages: Array<Record<string, unknown>> }>;
    assert.equal(written[0]!.messages[2]!.content, null);
    assert.deepEqual(await loadConversations(out), conversations);
  });

  const bad = (patch: (messages: Array<Record<string, unknown>>) => void): unknown => {
    const copy = structuredClone(agentic) as { messages: Array<Record<string, unknown>> };
    patch(copy.messages);
    return [copy];
  };

  test('validation names the conversation, the message and the field', async () => {
    assert.match(await loadError(file(bad((m) => (m[3]!.tool_call_id = 'zz')))), /conversation 0 \(id "agent-1"\), message 3: expected "tool_call_id" to be the id of a call .*"c1".*got "zz"/);
    assert.match(await loadError(file(bad((m) => m.splice(3, 1)))), /message 3: expected role "tool" .*got "assistant"/);
    assert.match(await loadError(file(bad((m) => m.splice(6, 1)))), /message 6: expected role "tool", "assistant" or "user" after a tool result, got "assistant"; calls "c2" have no result yet/);
    assert.match(await loadError(file(bad((m) => delete (m[2]!.tool_calls as Array<Record<string, unknown>>)[0]!.id))), /message 2: expected "tool_calls\[0\]\.id" to be a non-empty string/);
    assert.match(await loadError(file(bad((m) => (m[1]!.content = [{ type: 'text' }])))), /message 1: content\[0\]: expected "text" to be a string/);
    assert.match(await loadError(file(bad((m) => (m[1]!.content = [{ type: 'audio' }])))), /message 1: content\[0\]: expected "type" to be "text", "image_url" or "input_audio", got "audio"/);
    assert.match(await loadError(file(bad((m) => (m[7]!.content = null)))), /message 7: expected "content" to be a string, a list of content parts, or null with "tool_calls", got null/);
    assert.match(await loadError(file([{ ...agentic, tools: {} }])), /conversation 0 \(id "agent-1"\): expected "tools" to be an array/);
  });

  test('sub-agents nest into their parent at the fork point', async () => {
    const child = (id: string) => ({ id, parent: 'agent-1', fork_at: 4, messages: [{ role: 'user', content: `task ${id}` }, { role: 'assistant', content: 'ok' }] });
    const conversations = await loadConversations(file([agentic, child('s1'), child('s2')]));
    assert.equal(conversations.length, 1);
    assert.deepEqual(conversations[0]!.forks!.map((c) => [c.id, c.parent]), [['s1', { id: 'agent-1', at: 4 }], ['s2', { id: 'agent-1', at: 4 }]]);
    const out = join(dir, 'forks.jsonl');
    await writeConversations(out, conversations);
    assert.deepEqual(await loadConversations(out), conversations);
    assert.match(await loadError(file([child('s1'), agentic])), /conversation 0 \(id "s1"\): "parent" "agent-1" is not a conversation before this one/);
    assert.match(await loadError(file([agentic, { ...child('s1'), fork_at: 3 }])), /"fork_at" 3 is not an assistant message of parent "agent-1"/);
  });
});
