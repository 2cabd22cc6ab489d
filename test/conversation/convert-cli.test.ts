import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConversations } from '../../src/conversation/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

describe('chatload convert sharegpt', { timeout: 60_000 }, () => {
  test('merges split parts, filters, keeps ASCII-only conversations, reports drops', async () => {
    const dir = tempDir('convert');
    const items = [
      { id: 'a_0', conversations: [{ from: 'human', value: 'Plain ASCII question one' }, { from: 'gpt', value: 'Plain ASCII answer one' }] },
      { id: 'a_1', conversations: [{ from: 'human', value: 'Follow-up question here' }, { from: 'gpt', value: 'Follow-up answer here' }] },
      { id: 'b', conversations: [{ from: 'human', value: 'Short' }, { from: 'gpt', value: 'x' }] },
      { id: 'c', conversations: [{ from: 'gpt', value: 'Only an answer' }] },
      { id: 'd', conversations: [{ from: 'user', value: 'Une question en français ?' }, { from: 'assistant', value: 'Une réponse complète.' }] },
    ];
    writeFileSync(join(dir, 'in.json'), JSON.stringify(items, null, 2));
    const r = await runCli(['convert', 'sharegpt', join(dir, 'in.json'), join(dir, 'out.json'), '--min-content-len', '3', '--min-turns', '2']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /kept 2 conversations from 5 items; merged 1 split part; dropped 1 a message shorter than --min-content-len, 1 no user message/);
    const out = await loadConversations(join(dir, 'out.json'));
    assert.deepEqual(out.map((c) => c.id), ['a', 'd']);
    assert.equal(out[0]!.messages.length, 4);
    assert.equal(out[0]!.messages[2]!.content, 'Follow-up question here');
    const jsonl = await runCli(['convert', 'sharegpt', join(dir, 'in.json'), join(dir, 'out.jsonl'), '--max-items', '1', '--seed', '2']);
    assert.equal(jsonl.code, 0, jsonl.stderr);
    assert.equal(readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n').length, 1);
    const missing = await runCli(['convert', 'sharegpt', join(dir, 'nope.json'), join(dir, 'x.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.json: cannot read the file: no such file/);
  });
});
