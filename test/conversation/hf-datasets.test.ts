// Local Hugging Face datasets (issue #36, part 4): Parquet and Arrow files, save_to_disk and DatasetDict folders, Hub
// Parquet shards and JSONL exports, read as conversations. The fixtures (test/fixtures/hf/) are written by
// test/helpers/hf-fixtures.ts; the Parquet ones are hand-encoded (test/helpers/parquet-writer.ts), so the first test
// checks that hyparquet reads them back as written.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { Table, tableToIPC, vectorFromArray } from 'apache-arrow';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { loadDataset, type LoadOptions } from '../../src/conversation/load.js';
import { DatasetError } from '../../src/errors/index.js';
import { ALPACA, HF_FIXTURES, HUB, SAVED_TEST, SAVED_TRAIN, writeHfFixtures } from '../helpers/hf-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('hf-datasets');
const load = (path: string, hf: LoadOptions['hf'] = {}, warn?: (m: string) => void) => loadDataset(path, { hf, warn });

/** Every file under `root`, relative, sorted. */
function filesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out.sort();
}

/** `text` as a JSONL file in the test folder. */
function jsonl(name: string, rows: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}

describe('the Hugging Face fixtures', () => {
  test('are what hf-fixtures.ts writes, byte for byte', () => {
    const fresh = join(dir, 'fresh');
    writeHfFixtures(fresh);
    assert.deepEqual(filesUnder(fresh), filesUnder(HF_FIXTURES));
    for (const f of filesUnder(HF_FIXTURES)) assert.ok(readFileSync(join(fresh, f)).equals(readFileSync(join(HF_FIXTURES, f))), f);
  });

  test('the hand-encoded Parquet file reads back in hyparquet as written: its row groups, nulls and int64 ids', async () => {
    const file = await asyncBufferFromFile(join(HF_FIXTURES, 'alpaca.parquet'));
    const metadata = await parquetMetadataAsync(file);
    assert.equal(metadata.row_groups.length, 3);
    const rows = await parquetReadObjects({ file, metadata });
    assert.deepEqual(rows, ALPACA.id.map((id, i) => ({ id, instruction: ALPACA.instruction[i], input: ALPACA.input[i], output: ALPACA.output[i] })));
  });
});

describe('Parquet, Arrow and dataset folders as conversations', () => {
  test('a Parquet file of the Alpaca layout: instruction (and its input) as the prompt, output as the recorded answer', async () => {
    const loaded = await load(join(HF_FIXTURES, 'alpaca.parquet'));
    assert.equal(loaded.format, 'huggingface');
    assert.deepEqual(loaded.conversations, ALPACA.id.map((id, i) => ({
      id: String(id),
      messages: [
        { role: 'user', content: ALPACA.input[i] ? `${ALPACA.instruction[i]}\n\n${ALPACA.input[i]}` : ALPACA.instruction[i] },
        { role: 'assistant', content: ALPACA.output[i] },
      ],
    })));
  });

  test('a DatasetDict folder: the train split by default, its shards and record batches in order (messages layout)', async () => {
    const loaded = await load(join(HF_FIXTURES, 'saved'));
    assert.deepEqual(loaded.conversations, SAVED_TRAIN);
    assert.equal(loaded.huggingface?.split, 'train');
    assert.deepEqual(loaded.huggingface?.files.map((f) => relative(HF_FIXTURES, f)), ['saved/train/data-00000-of-00002.arrow', 'saved/train/data-00001-of-00002.arrow']);
    // A split's own folder (Dataset.save_to_disk) reads the same.
    assert.deepEqual((await load(join(HF_FIXTURES, 'saved', 'train'))).conversations, SAVED_TRAIN);
  });

  test('--split test: a ShareGPT conversations column (from/value), converted as ShareGPT files are', async () => {
    const loaded = await load(join(HF_FIXTURES, 'saved'), { split: 'test' });
    assert.deepEqual(loaded.conversations.map((c) => c.id), SAVED_TEST.map((r) => r.id));
    assert.deepEqual(loaded.conversations[1]!.messages, SAVED_TEST[1]!.conversations.map((t) => ({ role: t.from === 'human' ? 'user' : 'assistant', content: t.value })));
    assert.equal(loaded.sharegpt?.kept, 2);
  });

  test('--split of a save_to_disk folder that holds another split is refused', async () => {
    await assert.rejects(load(join(HF_FIXTURES, 'saved', 'test'), { split: 'train' }), /saved\/test: --split train: this folder holds the split "test" only$/);
  });

  test('Hub Parquet shards with their own column names: --columns maps them; --split picks validation', async () => {
    const columns = { id: 'conv', prompt: 'text', response: 'reply', system: 'sys' };
    const train = await load(join(HF_FIXTURES, 'hub'), { columns });
    assert.deepEqual(train.conversations, HUB.train.conv.map((id, i) => ({
      id,
      messages: [{ role: 'system', content: HUB.train.sys[i] }, { role: 'user', content: HUB.train.text[i] }, { role: 'assistant', content: HUB.train.reply[i] }],
    })));
    const validation = await load(join(HF_FIXTURES, 'hub'), { columns, split: 'validation' });
    assert.deepEqual(validation.conversations.map((c) => c.id), ['v-0']);
    await assert.rejects(load(join(HF_FIXTURES, 'hub')), /no chat layout in the columns "conv", "text", "reply", "sys"/);
  });

  test('an Arrow IPC file in the file format (not the stream format) reads too', async () => {
    const path = join(dir, 'pairs.arrow');
    const table = new Table({ question: vectorFromArray(['Why is the sea salty?']), answer: vectorFromArray(['Rivers carry salts into it.']) });
    writeFileSync(path, tableToIPC(table, 'file'));
    const loaded = await load(path);
    assert.deepEqual(loaded.conversations, [{ id: 'row-0', messages: [{ role: 'user', content: 'Why is the sea salty?' }, { role: 'assistant', content: 'Rivers carry salts into it.' }] }]);
  });
});

describe('JSONL exports go through the same column mapping', () => {
  test('the three layouts are detected: messages (no id), conversations of role/content, and prompt/response pairs', async () => {
    const messages = await load(jsonl('messages.jsonl', [{ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] }]));
    assert.equal(messages.format, 'huggingface');
    assert.deepEqual(messages.conversations, [{ id: 'row-0', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] }]);
    const roles = await load(jsonl('conv-roles.jsonl', [{ conversation_id: 'c9', conversations: [{ role: 'user', content: 'a?' }, { role: 'assistant', content: 'b.' }] }]));
    assert.deepEqual(roles.conversations, [{ id: 'c9', messages: [{ role: 'user', content: 'a?' }, { role: 'assistant', content: 'b.' }] }]);
    const pairs = await load(jsonl('qa.jsonl', [{ question: 'q1', answer: 'a1', system: null }, { question: 'q2', answer: 'a2', system: 'Be brief.' }]));
    assert.deepEqual(pairs.conversations.map((c) => c.messages), [
      [{ role: 'user', content: 'q1' }, { role: 'assistant', content: 'a1' }],
      [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'q2' }, { role: 'assistant', content: 'a2' }],
    ]);
  });

  test('--columns maps a custom layout; without it the file is no chatload dataset', async () => {
    const path = jsonl('custom.jsonl', [{ key: 7, ask: 'Who wrote Hamlet?', say: 'Shakespeare.' }]);
    const loaded = await load(path, { columns: { id: 'key', prompt: 'ask', response: 'say' } });
    assert.deepEqual(loaded.conversations, [{ id: '7', messages: [{ role: 'user', content: 'Who wrote Hamlet?' }, { role: 'assistant', content: 'Shakespeare.' }] }]);
    await assert.rejects(load(path), DatasetError);
  });

  test("chatload's own JSONL (id and messages) and ShareGPT items are read as before", async () => {
    const own = await load(jsonl('own.jsonl', [{ id: 'a', messages: [{ role: 'user', content: 'hi' }] }]));
    assert.equal(own.format, 'jsonl');
    const sharegpt = await load(jsonl('sg.jsonl', [{ id: 's', conversations: [{ from: 'human', value: 'hi' }, { from: 'gpt', value: 'yo' }] }]));
    assert.equal(sharegpt.format, 'sharegpt');
  });
});
