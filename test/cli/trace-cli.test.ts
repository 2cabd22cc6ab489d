import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURES } from '../helpers/tokenizers.js';
import type { RequestRecord } from '../../src/metrics/record.js';

const BAILIAN = join(FIXTURES, 'bailian-sample.jsonl');
const MOONCAKE = join(FIXTURES, 'mooncake-sample.jsonl');

describe('chatload trace', { timeout: 90_000 }, () => {
  test('trace stats prints lengths, the rate over time and the theoretical hit ratio', async () => {
    const r = await runCli(['trace', 'stats', BAILIAN]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /bailian trace, 6 requests in 4 sessions over 1\.5 s \(4\.00 req\/s\), 16 tokens a block/);
    assert.match(r.stdout, /input tokens\s+min 33 {2}mean 67\.5/);
    // Worked by hand from the fixture's hash ids (full blocks only): chat 2 reuses blocks 10, 11 (32 tokens); chat 3
    // 10, 11 (block 12 was partial in chat 1); chat 5 10-14 (80); chat 6 10, 11 (32): 176 of 405 input tokens.
    assert.match(r.stdout, /theoretical hit ratio 43\.46% \(176 of 405 input tokens, unbounded cache\)/);
    assert.match(r.stdout, /request rate over time/);
  });

  test('--kv-cache-tokens adds the LRU-bounded ratio; --json prints the same numbers, with snake_case keys', async () => {
    const r = await runCli(['trace', 'stats', MOONCAKE, '--kv-cache-tokens', '1024', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const stats = JSON.parse(r.stdout) as { requests: number; sessions: number; block_size: number; infinite: { hit_tokens: number; input_tokens: number }; bounded: { hit_tokens: number; kv_cache_tokens: number } };
    assert.equal(stats.requests, 10);
    assert.equal(stats.bounded.kv_cache_tokens, 1024);
    assert.ok(stats.bounded.hit_tokens < stats.infinite.hit_tokens, `a 2-block cache keeps less than an unbounded one`);
    // Every key at every depth, as results.json's (issue #34, item 7).
    const keys = (value: unknown): string[] =>
      Array.isArray(value) ? value.flatMap(keys) : typeof value === 'object' && value !== null ? Object.entries(value).flatMap(([k, v]) => [k, ...keys(v)]) : [];
    const all = keys(stats);
    assert.ok(all.includes('mean_rate_per_sec') && all.includes('start_sec') && all.includes('per_sec'), all.join(' '));
    assert.deepEqual(all.filter((k) => /[A-Z]/.test(k)), [], 'no camelCase key');
    const text = await runCli(['trace', 'stats', MOONCAKE, '--kv-cache-tokens', '1024']);
    assert.match(text.stdout, new RegExp(`${stats.requests} requests in ${stats.sessions} sessions .* ${stats.block_size} tokens a block`));
    assert.match(text.stdout, new RegExp(`\\(${stats.infinite.hit_tokens} of ${stats.infinite.input_tokens} input tokens`));
  });

  test('a file that is no trace, and a bad flag, exit 2 with one line', async () => {
    const file = join(tempDir('trace-notrace'), 'conversations.jsonl');
    writeFileSync(file, `${JSON.stringify({ id: 'a', messages: [{ role: 'user', content: 'hi' }] })}\n`);
    const notrace = await runCli(['trace', 'stats', file]);
    assert.equal(notrace.code, 2);
    assert.equal(notrace.stderr, `chatload: ${file}: not a production trace (its first row has no hash_ids and input_length, nor chat_id and parent_chat_id, and its first line is no Azure or BurstGPT CSV header; name the format with --input-format if it is one)\n`);
    // A dataset of conversations (a JSON list, pretty-printed as generate writes it) and a generation config: the
    // wrong file, said in one line, not a JSON syntax error of its first line (issue #34, item 7).
    const list = join(tempDir('trace-notrace'), 'conversations.json');
    writeFileSync(list, JSON.stringify([{ id: 'a', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }] }], null, 2));
    const listed = await runCli(['trace', 'stats', list]);
    assert.equal(listed.code, 2);
    assert.equal(listed.stderr, `chatload: ${list}: not a production trace (a JSON list, as a dataset of conversations is; a trace is JSONL, one request a line)\n`);
    const config = await runCli(['trace', 'stats', join(FIXTURES, 'generate_multi_turn.json')]);
    assert.equal(config.code, 2);
    assert.match(config.stderr, /^chatload: \S+generate_multi_turn\.json: not a production trace \(its first line is not one whole JSON object; a trace is JSONL, one request a line\)\n$/);
    const flag = await runCli(['trace', 'stats', BAILIAN, '--kv-cache-tokens', 'lots']);
    assert.equal(flag.code, 2);
    assert.equal(flag.stderr.trim().split('\n').length, 1, flag.stderr);
  });

  test('run replays a trace; its expected cached tokens are what trace stats predicts', async () => {
    const dir = tempDir('trace-cli');
    const stats = await runCli(['trace', 'stats', BAILIAN, '--json']);
    const predicted = (JSON.parse(stats.stdout) as { infinite: { hit_tokens: number } }).infinite.hit_tokens;
    const run = await runCli(['run', '-i', BAILIAN, '--trace-speed', '4', '--output-dir', dir]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /schedule\s+lag p50/);
    const records = readFileSync(join(dir, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
    assert.equal(records.length, 6);
    assert.equal(records.reduce((n, r) => n + r.expected_cached_tokens, 0), predicted);
  });
});
