import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURES, LLAMA2_DIR } from '../helpers/tokenizers.js';

describe('chatload generate', { timeout: 90_000 }, () => {
  test('writes JSON and JSONL, prints the reference statistics, and is deterministic', async () => {
    const dir = tempDir('gen-cli');
    copyFileSync(join(FIXTURES, 'generate_multi_turn.json'), join(dir, 'config.json'));
    copyFileSync(join(FIXTURES, 'corpus-voyage.txt'), join(dir, 'pg1184.txt'));
    const a = await runCli(['generate', '-i', join(dir, 'config.json'), '-o', join(dir, 'a.json'), '--tokenizer', LLAMA2_DIR, '--print-stats', '--seed', '5']);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stderr, /chatload generate: 24 conversations, \d+ user turns, \d+ user tokens \(llama2|models, every user turn exact\)/);
    assert.match(a.stdout, /^\s+count\s+mean\s+std\s+min\s+25%\s+50%\s+75%\s+90%\s+99%\s+max\nnum_turns\s+24 /);
    assert.match(a.stdout, /user tokens/);
    assert.match(a.stdout, /request tokens/);
    const list = JSON.parse(readFileSync(join(dir, 'a.json'), 'utf8')) as { id: string; messages: { role: string; max_tokens?: number }[] }[];
    assert.equal(list.length, 24);
    assert.ok(list.every((c) => c.messages.filter((m) => m.role === 'assistant').every((m) => typeof m.max_tokens === 'number')));
    const b = await runCli(['generate', '-i', join(dir, 'config.json'), '-o', join(dir, 'b.jsonl'), '--tokenizer', LLAMA2_DIR, '--seed', '5']);
    assert.equal(b.code, 0, b.stderr);
    const lines = readFileSync(join(dir, 'b.jsonl'), 'utf8').trim().split('\n');
    assert.deepEqual(lines.map((l) => JSON.parse(l) as unknown), list);
  });

  test('a dataset that is not a config, and a bad tokenizer, exit 2 with one line', async () => {
    const dir = tempDir('gen-cli-bad');
    const notConfig = await runCli(['generate', '-i', join(FIXTURES, 'corpus-voyage.txt'), '-o', join(dir, 'x.json')]);
    assert.equal(notConfig.code, 2);
    const badTokenizer = await runCli(['generate', '-i', join(FIXTURES, 'generate_multi_turn.json'), '-o', join(dir, 'x.json'), '--tokenizer', 'tiktoken:nope']);
    assert.equal(badTokenizer.code, 2);
    assert.equal(badTokenizer.stderr.trim().split('\n').length, 1);
    assert.match(badTokenizer.stderr, /unknown encoding "nope"/);
  });
});
