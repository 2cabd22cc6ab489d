// Encodings of input files (issue #16): a UTF-8 byte order mark is dropped in every dataset format; bytes that are
// not UTF-8 are refused with the file and byte offset on one line, or read as U+FFFD with `allowInvalidUtf8`.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { loadDataset, streamJsonList } from '../../src/conversation/index.js';
import { ConfigError, DatasetError } from '../../src/errors/index.js';
import { messageText } from '../../src/tokenizer/index.js';
import { firstInvalidUtf8, utf8Chunks, utf8Lines } from '../../src/util/utf8-text.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('encoding');
let n = 0;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function file(content: string | Buffer, ext: string): string {
  const path = join(dir, `f${n++}.${ext}`);
  writeFileSync(path, content);
  return path;
}

const conversation = (id: string, text = 'hi'): Record<string, unknown> => ({ id, messages: [{ role: 'user', content: text }, { role: 'assistant', content: 'ok' }] });
const GEN = {
  filetype: 'generate_conversations',
  num_conversations: 2,
  prompt_input: { num_turns: { distribution: 'constant', value: 2 }, num_tokens: { distribution: 'constant', value: 30 } },
  prompt_output: { num_tokens: { distribution: 'constant', value: 5 } },
};

async function loadError(path: string, options = {}): Promise<string> {
  try {
    await loadDataset(path, options);
  } catch (error) {
    assert.ok(error instanceof DatasetError || error instanceof ConfigError, `unexpected ${(error as Error).stack}`);
    assert.ok(!/[\r\n]/.test(error.message), `one line: ${error.message}`);
    return error.message;
  }
  assert.fail('expected the load to fail');
}

describe('a UTF-8 byte order mark is dropped', () => {
  const withBom = (text: string): Buffer => Buffer.concat([BOM, Buffer.from(text)]);
  test('JSON list, JSONL, ShareGPT (JSON and JSONL) and generation configs', async () => {
    const sharegpt = { id: 's', conversations: [{ from: 'human', value: 'q' }, { from: 'gpt', value: 'a' }] };
    const cases: [string, string, string][] = [
      [JSON.stringify([conversation('a')]), 'json', 'json'],
      [`${JSON.stringify(conversation('a'))}\n${JSON.stringify(conversation('b'))}\n`, 'jsonl', 'jsonl'],
      [JSON.stringify([sharegpt]), 'json', 'sharegpt'],
      [`${JSON.stringify(sharegpt)}\r\n`, 'jsonl', 'sharegpt'],
      [JSON.stringify(GEN), 'json', 'generate'],
      [JSON.stringify(GEN), 'jsonl', 'generate'],
    ];
    for (const [text, ext, format] of cases) {
      const loaded = await loadDataset(file(withBom(text), ext));
      assert.equal(loaded.format, format, text);
      assert.ok(!messageText(loaded.conversations[0]!.messages[0]!.content).startsWith('\uFEFF'));
    }
  });

  test('a streamed JSON list, read in chunks smaller than the mark; and a text_files corpus', async () => {
    const path = file(withBom(JSON.stringify([conversation('a'), conversation('b')])), 'json');
    for (const chunkBytes of [1, 2, 3, 5]) {
      const ids: unknown[] = [];
      for await (const e of streamJsonList(path, { chunkBytes })) ids.push((JSON.parse(e.text) as { id: unknown }).id);
      assert.deepEqual(ids, ['a', 'b'], `chunks of ${chunkBytes}`);
    }
    const corpus = file(withBom('Plain words of the corpus, enough of them to generate from. '.repeat(40)), 'txt');
    const loaded = await loadDataset(file(JSON.stringify({ ...GEN, text_files: [corpus] }), 'json'));
    assert.ok(loaded.conversations.every((c) => c.messages.every((m) => !messageText(m.content).includes('\uFEFF'))));
  });

  test('only at the start: U+FEFF inside the text is kept', async () => {
    const loaded = await loadDataset(file(withBom(JSON.stringify([conversation('a', '\uFEFFinside')])), 'json'));
    assert.equal(loaded.conversations[0]!.messages[0]!.content, '\uFEFFinside');
  });
});

describe('bytes that are not UTF-8', () => {
  const bad = (before: string, bytes: number[], after: string): Buffer => Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);

  test('are refused with the file and byte offset, in every format', async () => {
    const json = `[{"id": "a", "messages": [{"role": "user", "content": "`;
    const offset = Buffer.byteLength(json);
    assert.match(await loadError(file(bad(json, [0xff], `"}]}]`), 'json')), new RegExp(`f\\d+\\.json, byte ${offset}: invalid UTF-8 \\(byte 0xff\\); expected UTF-8 text`));
    const line1 = `${JSON.stringify(conversation('a'))}\n`;
    const line2 = '{"id": "b", "messages": [{"role": "user", "content": "';
    const jsonl = bad(line1 + line2, [0xc3, 0x28], '"}]}\n');
    assert.match(await loadError(file(jsonl, 'jsonl')), new RegExp(`byte ${Buffer.byteLength(line1 + line2)}: invalid UTF-8 \\(byte 0xc3\\)`));
    const config = bad(JSON.stringify(GEN).slice(0, -1) + ', "note": "', [0xe9], '"}');
    assert.match(await loadError(file(config, 'json')), /byte \d+: invalid UTF-8 \(byte 0xe9\)/);
    const corpus = file(bad('Some words. '.repeat(20), [0xfe], ' more words.'), 'txt');
    assert.match(await loadError(file(JSON.stringify({ ...GEN, text_files: [corpus] }), 'json')), new RegExp(`text_files: .*f\\d+\\.txt, byte 240: invalid UTF-8`));
  });

  test('overlong forms, surrogates, code points past U+10FFFF and a sequence cut by the end are invalid', async () => {
    for (const bytes of [[0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80]]) {
      assert.equal(firstInvalidUtf8(Buffer.from([0x41, ...bytes, 0x41])), 1, bytes.join(' '));
    }
    assert.match(await loadError(file(Buffer.from([...Buffer.from(`${JSON.stringify(conversation('a'))}\n`), 0xe2, 0x82]), 'jsonl')), new RegExp(`byte ${JSON.stringify(conversation('a')).length + 1}: invalid UTF-8 \\(a UTF-8 sequence cut by the end of the file\\)`));
  });

  test('a streamed read finds the same offset wherever the chunks split, and never splits a valid character', async () => {
    const text = bad('ab€😀'.repeat(5), [0xa0], 'tail');
    const path = file(text, 'txt');
    for (const chunkBytes of [1, 2, 3, 4, 7]) {
      await assert.rejects(
        (async () => {
          for await (const chunk of utf8Chunks(path, {}, chunkBytes)) void chunk;
        })(),
        (error: Error) => error.message.includes(`byte ${Buffer.byteLength('ab€😀'.repeat(5))}:`),
      );
      let whole = '';
      for await (const chunk of utf8Chunks(file('ab€😀\r\nz', 'txt'), {}, chunkBytes)) whole += chunk;
      assert.equal(whole, 'ab€😀\r\nz');
    }
  });

  test('with allowInvalidUtf8 they load as U+FFFD, with one warning naming the byte', async () => {
    const warnings: string[] = [];
    const head = `[{"id": "a", "messages": [{"role": "user", "content": "x`;
    const path = file(bad(head, [0xff, 0xfe], `y"}]}]`), 'json');
    const loaded = await loadDataset(path, { allowInvalidUtf8: true, warn: (m) => warnings.push(m) });
    assert.equal(loaded.conversations[0]!.messages[0]!.content, 'x\uFFFD\uFFFDy');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, new RegExp(`f\\d+\\.json, byte ${Buffer.byteLength(head)}: invalid UTF-8, read as U\\+FFFD`));
    const lines: string[] = [];
    for await (const line of utf8Lines(file(bad('a\n', [0xff], '\rb\r\nc'), 'jsonl'), { allowInvalidUtf8: true, maxLineChars: 10 })) lines.push(line);
    assert.deepEqual(lines, ['a', '\uFFFD', 'b', 'c'], 'LF, CR and CRLF end lines');
  });

  test('firstInvalidUtf8 agrees with the WHATWG decoder on arbitrary bytes', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const at = firstInvalidUtf8(bytes);
        let valid = true;
        try {
          fatal.decode(bytes);
        } catch {
          valid = false;
        }
        assert.equal(at === -1, valid);
        if (at !== -1) assert.doesNotThrow(() => fatal.decode(bytes.subarray(0, at)), 'everything before it decodes');
      }),
      { numRuns: 500 },
    );
  });
});

describe('--allow-invalid-utf8 on the command line', () => {
  test('run refuses a file with a non-UTF-8 byte naming the offset and the flag; with the flag it reads it, warning once', { timeout: 60_000 }, async () => {
    // "café" with the é in Latin-1 (0xe9), as a file saved in the wrong encoding has it.
    const text = JSON.stringify([conversation('c0', 'caf@')]);
    const at = text.indexOf('@');
    const bad = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xe9]), Buffer.from(text.slice(at + 1))]);
    const path = file(bad, 'json');
    const out = join(dir, 'out.json');
    const refused = await runCli(['run', '-i', path, '-o', out, '--generate-only']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr.trim(), /^chatload: .*f\d+\.json, byte \d+: invalid UTF-8 \(byte 0xe9\).*--allow-invalid-utf8/);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
    const allowed = await runCli(['run', '-i', path, '-o', out, '--generate-only', '--allow-invalid-utf8']);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /warning: .*invalid UTF-8, read as U\+FFFD \(--allow-invalid-utf8\)/);
  });
});
