import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadDataset } from '../../src/conversation/load.js';
import { DatasetError } from '../../src/errors/index.js';
import { FIXTURES } from '../helpers/tokenizers.js';
import { tempDir } from '../helpers/tmp.js';

const MOONCAKE = join(FIXTURES, 'mooncake-sample.jsonl');
const BAILIAN = join(FIXTURES, 'bailian-sample.jsonl');

function write(name: string, lines: unknown[]): string {
  const file = join(tempDir('trace'), name);
  writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return file;
}

async function loadError(file: string, options: Parameters<typeof loadDataset>[1] = {}): Promise<string> {
  await assert.rejects(loadDataset(file, options), (e: unknown) => e instanceof DatasetError);
  try {
    await loadDataset(file, options);
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

describe('Mooncake traces', () => {
  test('a Mooncake JSONL loads as a trace (it used to fail with `expected "id" to be a string, got nothing`)', async () => {
    const file = write('plain.jsonl', [{ timestamp: 0, input_length: 600, output_length: 10, hash_ids: [1, 2] }]);
    const loaded = await loadDataset(file);
    assert.equal(loaded.format, 'mooncake');
    assert.equal(loaded.conversations.length, 1);
    const trace = loaded.conversations[0]!.trace!;
    assert.deepEqual(trace.turns[0], { atMs: 0, inputLength: 600, outputLength: 10, hashIds: [1, 2] });
    assert.equal(trace.blockSize, 512);
  });

  test('rows group into sessions by session_id, ordered by their first timestamp, with delays for later turns', async () => {
    const loaded = await loadDataset(MOONCAKE);
    assert.equal(loaded.format, 'mooncake');
    // 10 rows: s1 has 3 turns, the other 7 rows are sessions of their own.
    assert.equal(loaded.conversations.length, 8);
    const s1 = loaded.conversations.find((c) => c.id === 's1')!;
    assert.equal(s1.trace!.context, 'history');
    assert.deepEqual(
      s1.trace!.turns.map((t) => [t.atMs, t.delayMs, t.inputLength]),
      [
        [300, undefined, 700],
        [undefined, 200, 300],
        [undefined, 100, 250],
      ],
    );
    const starts = loaded.conversations.map((c) => c.trace!.turns[0]!.atMs!);
    assert.deepEqual(starts, [...starts].sort((a, b) => a - b));
    assert.equal(starts[0], 0);
    // A pre-formatted prompt is sent as it is: self-contained.
    const s2 = loaded.conversations.find((c) => c.id === 's2')!;
    assert.equal(s2.trace!.context, 'self-contained');
    assert.equal(s2.trace!.turns[0]!.messages![1]!.content, 'What is a prefix cache?');
    // Placeholders keep the counts of turns true.
    assert.equal(s1.messages.length, 3);
  });

  test('--trace-window keeps the sessions starting inside it and rebases time to its start', async () => {
    const loaded = await loadDataset(MOONCAKE, { trace: { window: { startSec: 0.3, endSec: 0.9 } } });
    const starts = loaded.conversations.map((c) => c.trace!.turns[0]!.atMs);
    // Sessions at 300, 420, 650 and 800 ms of the trace, replayed from 300 ms.
    assert.deepEqual(starts, [0, 120, 350, 500]);
    const none = await loadError(MOONCAKE, { trace: { window: { startSec: 50 } } });
    assert.match(none, /no session starts inside --trace-window 50:/);
  });

  test('--trace-block-size changes what the hash ids must cover; too few ids is a one-line error naming the line', async () => {
    const file = write('short.jsonl', [
      { timestamp: 0, input_length: 100, output_length: 4, hash_ids: [1, 2, 3, 4, 5, 6, 7] },
      { timestamp: 5, input_length: 100, output_length: 4, hash_ids: [1, 2] },
    ]);
    // At Mooncake's 512 tokens a block one id covers 100 tokens; at 16, line 2 has too few.
    const loaded = await loadDataset(file);
    assert.equal(loaded.conversations[0]!.trace!.blockSize, 512);
    const message = await loadError(file, { trace: { blockSize: 16 } });
    assert.match(message, /short\.jsonl, line 2: hash_ids: expected at least 7 ids for input_length 100 at 16 tokens a block, got 2/);
  });

  test('bad fields are one-line errors with the line and the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ timestamp: 0, input_length: -1, output_length: 1, hash_ids: [1] }, /line 2: input_length: expected an integer >= 0, got -1$/],
      [{ timestamp: 0, input_length: 10, output_length: 1, hash_ids: ['a'] }, /line 2: hash_ids: expected integers >= 0, got "a"/],
      [{ timestamp: 'x', input_length: 10, output_length: 1, hash_ids: [1] }, /line 2: timestamp: expected a number >= 0/],
      [{ session_id: 'new', input_length: 10, output_length: 1, hash_ids: [1] }, /line 2: timestamp: expected a number >= 0 \(ms\) on the first request of a session, got nothing/],
      [{ timestamp: 0, input_length: 10, hash_ids: [1] }, /line 2: output_length: expected an integer >= 0, got nothing/],
    ];
    for (const [row, pattern] of cases) {
      const file = write('bad.jsonl', [{ timestamp: 0, input_length: 10, output_length: 1, hash_ids: [1] }, row]);
      assert.match(await loadError(file), pattern);
    }
  });

  test('--input-format forces the format, even for a file whose first row is not detected', async () => {
    const file = write('forced.txt', [{ timestamp: 0, output_length: 3, hash_ids: [4], input_length: 9 }]);
    assert.equal((await loadDataset(file, { trace: { format: 'mooncake' } })).format, 'mooncake');
    const bad = write('notrace.jsonl', [{ id: 'a', messages: [{ role: 'user', content: 'hi' }] }]);
    assert.match(await loadError(bad, { trace: { format: 'bailian' } }), /line 1: chat_id: expected an integer >= 0, got nothing/);
  });
});

describe('Bailian traces', () => {
  test('rows link into sessions through parent_chat_id; each turn is self-contained, timestamps in seconds become ms', async () => {
    const loaded = await loadDataset(BAILIAN);
    assert.equal(loaded.format, 'bailian');
    assert.deepEqual(
      loaded.conversations.map((c) => [c.id, c.trace!.turns.length]),
      [
        ['chat-1', 3],
        ['chat-2', 1],
        ['chat-4', 1],
        ['chat-6', 1],
      ],
    );
    const chat = loaded.conversations[0]!.trace!;
    assert.equal(chat.context, 'self-contained');
    assert.equal(chat.blockSize, 16);
    assert.deepEqual(
      chat.turns.map((t) => t.atMs),
      [0, 600, 1200],
    );
  });

  test('a parent outside the file makes the row a session of its own', async () => {
    const file = write('orphan.jsonl', [{ chat_id: 9, parent_chat_id: 3, timestamp: 2, input_length: 16, output_length: 1, type: 'text', turn: 2, hash_ids: [1] }]);
    const loaded = await loadDataset(file);
    assert.equal(loaded.conversations[0]!.id, 'chat-9');
    assert.equal(loaded.conversations[0]!.trace!.turns[0]!.atMs, 0);
  });
});
