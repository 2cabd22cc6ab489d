import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadDataset, ShareGptConverter, streamJsonList } from '../../src/conversation/index.js';
import { DatasetError } from '../../src/errors/index.js';
import { tempDir } from '../helpers/tmp.js';

const h = (value: string) => ({ from: 'human', value });
const g = (value: string) => ({ from: 'gpt', value });

/** A ShareGPT sample: a split conversation in two parts, plain ASCII text, odd speakers and broken items. */
const sample = [
  { id: 'abc_0', conversations: [h('Tell me about ships.'), g('Ships float.')] },
  { id: 'xyz', conversations: [{ from: 'system', value: 'Be brief.' }, { from: 'user', value: 'Hi' }, { from: 'chatgpt', value: 'Hello!' }] },
  { id: 'abc_1', conversations: [h('And boats?'), g('Boats too.'), h('Thanks')] },
  { id: 'gpt-first', conversations: [g('I start.'), h('Question?'), { from: 'bard', value: 'Answer.' }, { from: 'bing', value: 'More answer.' }] },
  { id: 'only-gpt', conversations: [g('Nobody asked.')] },
  { id: 'weird', conversations: [{ from: 'narrator', value: 'Once upon a time' }] },
  { id: 'long', conversations: [h('q'), g('a'.repeat(500))] },
];

describe('ShareGPT conversion', () => {
  test('maps roles, merges split parts, joins runs of one role, drops what cannot be used and says why', () => {
    const converter = new ShareGptConverter();
    sample.forEach((item, i) => converter.add(item, i));
    const { conversations, report } = converter.finish();
    assert.deepEqual(conversations.map((c) => c.id), ['abc', 'xyz', 'gpt-first', 'long']);
    assert.deepEqual(conversations[0]!.messages, [
      { role: 'user', content: 'Tell me about ships.' },
      { role: 'assistant', content: 'Ships float.' },
      { role: 'user', content: 'And boats?' },
      { role: 'assistant', content: 'Boats too.' },
      { role: 'user', content: 'Thanks' },
    ]);
    assert.deepEqual(conversations[1]!.messages.map((m) => m.role), ['system', 'user', 'assistant']);
    assert.deepEqual(conversations[2]!.messages, [
      { role: 'user', content: 'Question?' },
      { role: 'assistant', content: 'Answer.\n\nMore answer.' },
    ]);
    assert.equal(report.items, 7);
    assert.equal(report.mergedParts, 1);
    assert.deepEqual(report.dropped, { 'no user message': 1, 'an unknown speaker': 1 });
    assert.equal(report.kept, 4);
  });

  test('filters: turns, content length, max items (seeded), max turns cuts', () => {
    const run = (options: ConstructorParameters<typeof ShareGptConverter>[0]) => {
      const c = new ShareGptConverter(options);
      sample.forEach((item, i) => c.add(item, i));
      return c.finish();
    };
    assert.deepEqual(run({ minTurns: 3 }).conversations.map((c) => c.id), ['abc']);
    assert.deepEqual(run({ maxContentLen: 100 }).conversations.map((c) => c.id), ['abc', 'xyz', 'gpt-first']);
    assert.deepEqual(run({ minContentLen: 2 }).conversations.map((c) => c.id), ['abc', 'xyz', 'gpt-first']);
    const cut = run({ maxTurns: 2 });
    assert.equal(cut.conversations[0]!.messages.length, 2);
    assert.equal(cut.report.truncated, 1);
    const a = run({ maxItems: 2, seed: 1 });
    assert.equal(a.conversations.length, 2);
    assert.equal(a.report.dropped['over --max-items'], 2);
    assert.deepEqual(a.conversations, run({ maxItems: 2, seed: 1 }).conversations);
  });

  test('run -i accepts a ShareGPT file directly (JSON list and JSONL), reporting drops', async () => {
    const dir = tempDir('sharegpt');
    writeFileSync(join(dir, 's.json'), JSON.stringify(sample));
    const warnings: string[] = [];
    const loaded = await loadDataset(join(dir, 's.json'), { warn: (w) => warnings.push(w) });
    assert.equal(loaded.format, 'sharegpt');
    assert.equal(loaded.conversations.length, 4);
    assert.match(warnings[0]!, /ShareGPT: kept 4 conversations from 7 items; merged 1 split part; dropped 1 no user message, 1 an unknown speaker/);
    writeFileSync(join(dir, 's.jsonl'), sample.map((s) => JSON.stringify(s)).join('\n'));
    assert.equal((await loadDataset(join(dir, 's.jsonl'))).conversations.length, 4);
  });
});

describe('streamJsonList', () => {
  test('yields each element with its line, across read chunks, with brackets and quotes inside strings', async () => {
    const dir = tempDir('stream');
    const items = Array.from({ length: 120 }, (_, i) => ({ id: `c${i}`, messages: [{ role: 'user', content: `a "quoted" ] } [ { text \\ ${'x'.repeat(i * 37)}` }] }));
    const file = join(dir, 'big.json');
    writeFileSync(file, `[\n${items.map((i) => JSON.stringify(i)).join(',\n')}\n]\n`);
    const out: { value: unknown; line: number }[] = [];
    for await (const e of streamJsonList(file, { chunkBytes: 61 })) out.push({ value: JSON.parse(e.text), line: e.line });
    assert.deepEqual(out.map((e) => e.value), items);
    assert.deepEqual(out.slice(0, 3).map((e) => e.line), [2, 3, 4]);
  });

  test('structural errors are one-line DatasetErrors with the line', async () => {
    const dir = tempDir('stream-bad');
    const cases: [string, RegExp][] = [
      ['[{"a": 1}\n{"b": 2}]', /line 2: invalid JSON: expected ","/],
      ['[{"a": [1}]', /line 1: invalid JSON: unexpected "}"/],
      ['[{"a": 1},\n', /line 2: invalid JSON: the list is not closed/],
      ['{"a": 1}', /expected a JSON list/],
    ];
    for (const [i, [text, pattern]] of cases.entries()) {
      const file = join(dir, `f${i}.json`);
      writeFileSync(file, text);
      await assert.rejects(
        (async () => {
          for await (const e of streamJsonList(file)) void e;
        })(),
        (e: unknown) => e instanceof DatasetError && pattern.test(e.message),
        text,
      );
    }
  });
});
