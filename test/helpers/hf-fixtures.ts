// Writes test/fixtures/hf/ (committed; regenerate with `node --import tsx test/helpers/hf-fixtures.ts`): small Hugging
// Face datasets as `datasets` and the Hub lay them out on disk (docs/DATASETS.md, "Local Hugging Face datasets").
// - alpaca.parquet: id (int64), instruction, input (with nulls), output; 5 rows in row groups of 2 (hand-encoded,
//   test/helpers/parquet-writer.ts: no Parquet writer is installed).
// - saved/: a DatasetDict saved with save_to_disk: dataset_dict.json, and per split a folder of Arrow IPC *stream*
//   files data-0000N-of-0000M.arrow with dataset_info.json and state.json (huggingface/datasets,
//   src/datasets/arrow_dataset.py Dataset.save_to_disk, src/datasets/arrow_writer.py ArrowWriter,
//   src/datasets/dataset_dict.py DatasetDict.save_to_disk). train: `messages` (OpenAI role/content), two shards of
//   two record batches; test: `conversations` (ShareGPT from/value).
// - hub/: a snapshot_download of a Parquet dataset with its own column names (conv, text, reply, sys), two splits:
//   data/train-00000-of-00001.parquet and data/validation-00000-of-00001.parquet.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Field, List, Schema, Struct, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { writeParquet } from './parquet-writer.js';
import { FIXTURES } from './tokenizers.js';

export const HF_FIXTURES = join(FIXTURES, 'hf');

type Turn = { role: string; content: string };

/** The train split's conversations: id and OpenAI messages. */
export const SAVED_TRAIN: { id: string; messages: Turn[] }[] = [
  { id: 'chat-0', messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Name a prime above ten.' }, { role: 'assistant', content: 'Eleven.' }, { role: 'user', content: 'And one above twenty?' }, { role: 'assistant', content: 'Twenty-three.' }] },
  { id: 'chat-1', messages: [{ role: 'user', content: 'What colour is the sky on Mars at noon?' }, { role: 'assistant', content: 'Butterscotch, a dusty tan.' }] },
  { id: 'chat-2', messages: [{ role: 'user', content: 'Spell parquet backwards.' }, { role: 'assistant', content: 'teuqrap' }] },
  { id: 'chat-3', messages: [{ role: 'user', content: 'Translate "arrow" into French.' }, { role: 'assistant', content: 'flèche' }, { role: 'user', content: 'And into German?' }, { role: 'assistant', content: 'Pfeil' }] },
  { id: 'chat-4', messages: [{ role: 'user', content: 'How many legs has a spider?' }, { role: 'assistant', content: 'Eight.' }] },
  { id: 'chat-5', messages: [{ role: 'user', content: 'Is zero even?' }, { role: 'assistant', content: 'Yes.' }] },
];

/** The test split's ShareGPT conversations. */
export const SAVED_TEST: { id: string; conversations: { from: string; value: string }[] }[] = [
  { id: 'sg-0', conversations: [{ from: 'human', value: 'Which ocean is the deepest?' }, { from: 'gpt', value: 'The Pacific.' }] },
  { id: 'sg-1', conversations: [{ from: 'human', value: 'Boil water at sea level: how hot?' }, { from: 'gpt', value: '100 degrees Celsius.' }, { from: 'human', value: 'In Fahrenheit?' }, { from: 'gpt', value: '212.' }] },
];

/** alpaca.parquet's rows. */
export const ALPACA = {
  id: [101n, 102n, 103n, 104n, 105n],
  instruction: ['Give a synonym of quick.', 'Summarise the text.', 'Add the numbers.', 'Name the capital.', 'Write a haiku about rain.'],
  input: [null, 'Parquet stores data by column in row groups.', '17 and 25', 'Country: Portugal', ''],
  output: ['Rapid.', 'Parquet is columnar, split into row groups.', '42', 'Lisbon.', 'Soft rain on the roof / the gutters hum their one note / night drinks the garden'],
};

/** hub/'s rows (train, then validation). */
export const HUB = {
  train: { conv: ['h-0', 'h-1', 'h-2'], text: ['Tell me a fact about owls.', 'What is 7 times 6?', 'Name a blue fruit.'], reply: ['Owls can turn their heads 270 degrees.', '42.', 'Blueberry.'], sys: ['Answer in one line.', 'Answer in one line.', 'Answer in one line.'] },
  validation: { conv: ['v-0'], text: ['Which planet is largest?'], reply: ['Jupiter.'], sys: ['Answer in one line.'] },
};

const string = new Utf8();
const messageType = new List(new Field('item', new Struct([new Field('content', string, true), new Field('role', string, true)]), true));
const sharegptType = new List(new Field('item', new Struct([new Field('from', string, true), new Field('value', string, true)]), true));

/** Arrow IPC stream bytes of `rows` in record batches of `batchRows`, with the schema metadata ArrowWriter adds. */
function arrowStream(columns: Record<string, { type: List; values: unknown[] } | { type: Utf8; values: string[] }>, batchRows: number, features: unknown): Uint8Array {
  const total = Object.values(columns)[0]!.values.length;
  let table: Table | undefined;
  for (let start = 0; start < total; start += batchRows) {
    const part = new Table(Object.fromEntries(Object.entries(columns).map(([name, c]) => [name, vectorFromArray(c.values.slice(start, start + batchRows), c.type)])));
    table = table === undefined ? part : table.concat(part);
  }
  const metadata = new Map([['huggingface', JSON.stringify({ info: { features } })]]);
  const withMetadata = new Table(new Schema(table!.schema.fields, metadata), table!.batches);
  return tableToIPC(withMetadata, 'stream');
}

/** One split of a save_to_disk folder: its shards, dataset_info.json and state.json. */
function savedSplit(dir: string, split: string, shards: Uint8Array[], features: unknown, rows: number): void {
  mkdirSync(dir, { recursive: true });
  const names = shards.map((_, i) => `data-${String(i).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.arrow`);
  shards.forEach((bytes, i) => writeFileSync(join(dir, names[i]!), bytes));
  const state = { _data_files: names.map((filename) => ({ filename })), _fingerprint: `chatload-${split}`, _format_columns: null, _format_kwargs: {}, _format_type: null, _output_all_columns: false, _split: split };
  writeFileSync(join(dir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`);
  const info = { builder_name: null, citation: '', config_name: null, dataset_name: null, dataset_size: null, description: '', download_checksums: null, download_size: null, features, homepage: '', license: '', size_in_bytes: null, splits: { [split]: { name: split, num_examples: rows } }, supervised_keys: null, version: null };
  writeFileSync(join(dir, 'dataset_info.json'), `${JSON.stringify(info, null, 2)}\n`);
}

const value = { dtype: 'string', _type: 'Value' };

export function writeHfFixtures(root = HF_FIXTURES): void {
  mkdirSync(root, { recursive: true });
  writeParquet(join(root, 'alpaca.parquet'), [
    { name: 'id', type: 'int64', values: ALPACA.id },
    { name: 'instruction', type: 'utf8', values: ALPACA.instruction },
    { name: 'input', type: 'utf8', values: ALPACA.input },
    { name: 'output', type: 'utf8', values: ALPACA.output },
  ], 2);
  const saved = join(root, 'saved');
  mkdirSync(saved, { recursive: true });
  writeFileSync(join(saved, 'dataset_dict.json'), JSON.stringify({ splits: ['train', 'test'] }));
  const trainFeatures = { id: value, messages: [{ content: value, role: value }] };
  const trainShard = (rows: typeof SAVED_TRAIN): Uint8Array => arrowStream({ id: { type: string, values: rows.map((r) => r.id) }, messages: { type: messageType, values: rows.map((r) => r.messages) } }, 2, trainFeatures);
  savedSplit(join(saved, 'train'), 'train', [trainShard(SAVED_TRAIN.slice(0, 4)), trainShard(SAVED_TRAIN.slice(4))], trainFeatures, SAVED_TRAIN.length);
  const testFeatures = { id: value, conversations: [{ from: value, value }] };
  const testShard = arrowStream({ id: { type: string, values: SAVED_TEST.map((r) => r.id) }, conversations: { type: sharegptType, values: SAVED_TEST.map((r) => r.conversations) } }, 1000, testFeatures);
  savedSplit(join(saved, 'test'), 'test', [testShard], testFeatures, SAVED_TEST.length);
  const hub = join(root, 'hub', 'data');
  mkdirSync(hub, { recursive: true });
  for (const [split, rows] of Object.entries(HUB)) {
    writeParquet(join(hub, `${split}-00000-of-00001.parquet`), (['conv', 'text', 'reply', 'sys'] as const).map((name) => ({ name, type: 'utf8' as const, values: rows[name] })), 2);
  }
}

if (process.argv[1]?.endsWith('hf-fixtures.ts')) writeHfFixtures();
