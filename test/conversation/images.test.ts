import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { crc32 as zlibCrc32, inflateSync } from 'node:zlib';
import { loadDataset } from '../../src/conversation/index.js';
import { imageUrlProblem } from '../../src/conversation/content-parts.js';
import { DatasetError } from '../../src/errors/index.js';
import { crc32, encodePng } from '../../src/synth/png.js';
import { messageText, type ContentPart } from '../../src/tokenizer/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

/** A real 1x1 PNG (red), as a data URL. */
const PNG_BYTES = encodePng(1, 1, Uint8Array.from([255, 0, 0]));
const PNG_URL = `data:image/png;base64,${PNG_BYTES.toString('base64')}`;

/** The chunks of a PNG file, each with its CRC checked by node:zlib's own crc32 (an independent implementation). */
function pngChunks(png: Buffer): Array<{ type: string; data: Buffer }> {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'the PNG signature');
  const chunks: Array<{ type: string; data: Buffer }> = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    assert.equal(png.readUInt32BE(at + 8 + length), zlibCrc32(png.subarray(at + 4, at + 8 + length)), `${type} CRC`);
    chunks.push({ type, data });
    at += 12 + length;
  }
  return chunks;
}

describe('image parts in datasets', () => {
  test('a conversation with text and image_url parts loads; the text is what local counts see', async () => {
    const dir = tempDir('img-load');
    const content = [{ type: 'text', text: 'What colour is this?' }, { type: 'image_url', image_url: { url: PNG_URL, detail: 'low' } }];
    const file = join(dir, 'd.jsonl');
    writeFileSync(file, `${JSON.stringify({ id: 'v1', messages: [{ role: 'user', content }, { role: 'assistant', content: 'Red.' }] })}\n`);
    const loaded = await loadDataset(file);
    const parts = loaded.conversations[0]!.messages[0]!.content as ContentPart[];
    assert.deepEqual(parts, content);
    assert.equal(messageText(parts), 'What colour is this?');
  });

  test('bad parts are one-line errors naming the message and part, never quoting image bytes', async () => {
    const dir = tempDir('img-bad');
    const secretBytes = 'QUJDREVGR0hJSktMTU5PUA'.repeat(50);
    const cases: Array<[unknown, RegExp]> = [
      [[{ type: 'image_url', image_url: { url: `data:application/pdf;base64,${secretBytes}` } }], /content\[0\]: expected a base64 image data URL/],
      [[{ type: 'image_url', image_url: { url: `data:image/png;base64,` } }], /no data/],
      [[{ type: 'image_url', image_url: { url: `file:///etc/passwd` } }], /expected "image_url.url" to be a data URL/],
      [[{ type: 'text', text: 'hi' }, { type: 'audio', data: 'x' }], /content\[1\]: expected "type" to be "text", "image_url" or "input_audio"/],
      [[], /expected "content" to be a string or a list of content parts/],
    ];
    for (const [content, pattern] of cases) {
      const file = join(dir, 'd.json');
      writeFileSync(file, JSON.stringify([{ id: 'c', messages: [{ role: 'user', content }] }]));
      await assert.rejects(loadDataset(file), (error: unknown) => {
        assert.ok(error instanceof DatasetError);
        assert.match(error.message, pattern);
        assert.match(error.message, /conversation 0 \(id "c"\), message 0/);
        assert.ok(!error.message.includes('QUJDREVG'), 'no image bytes in the message');
        return true;
      });
    }
    assert.match(imageUrlProblem(`data:image/png;base64,${'A'.repeat(100)}`, 50)!, /over the bound of 50/);
    assert.equal(imageUrlProblem('https://example.com/cat.png'), undefined);
  });

  test('LLaVA-style ShareGPT items: the image file becomes a data URL part where <image> stands; a missing file is named', async () => {
    const dir = tempDir('img-sharegpt');
    writeFileSync(join(dir, 'cat.png'), PNG_BYTES);
    const item = { id: '000000033471', image: 'cat.png', conversations: [{ from: 'human', value: '<image>\nWhat is this?' }, { from: 'gpt', value: 'A cat.' }, { from: 'human', value: 'Sure?' }, { from: 'gpt', value: 'Yes.' }] };
    const file = join(dir, 'llava.json');
    writeFileSync(file, JSON.stringify([item]));
    const loaded = await loadDataset(file);
    assert.equal(loaded.format, 'sharegpt');
    const [first, , third] = loaded.conversations[0]!.messages;
    assert.deepEqual(first!.content, [{ type: 'image_url', image_url: { url: PNG_URL } }, { type: 'text', text: 'What is this?' }]);
    assert.equal(third!.content, 'Sure?');
    // convert writes them, and --image-dir names another folder.
    const out = join(dir, 'out.json');
    const converted = await runCli(['convert', 'sharegpt', file, out, '--image-dir', dir]);
    assert.equal(converted.code, 0, converted.stderr);
    writeFileSync(file, JSON.stringify([{ ...item, image: 'dog.jpg' }]));
    await assert.rejects(loadDataset(file), (error: unknown) => {
      assert.ok(error instanceof DatasetError);
      assert.match(error.message, /ShareGPT item "000000033471": image file .*dog\.jpg not found \(give the image folder with --image-dir\)/);
      return true;
    });
  });
});

describe('synthetic images from the generator', () => {
  const config = (images: object) => ({
    filetype: 'generate_conversations',
    num_conversations: 3,
    prompt_input: { num_turns: { distribution: 'constant', value: 4 }, num_tokens: { distribution: 'constant', value: 40 } },
    prompt_output: { num_tokens: { distribution: 'constant', value: 10 } },
    images,
  });

  test('valid PNGs of the configured size, deterministic for a seed, different per image, the text unchanged', async () => {
    const dir = tempDir('img-gen');
    const file = join(dir, 'gen.json');
    writeFileSync(file, JSON.stringify(config({ num_images: 2, width: 20, height: 10, turns: 'all' })));
    const a = await loadDataset(file, { seed: 5 });
    const b = await loadDataset(file, { seed: 5 });
    assert.deepEqual(a.conversations, b.conversations, 'same seed, same images');
    const { images: _none, ...plain } = config({});
    writeFileSync(join(dir, 'plain.json'), JSON.stringify(plain));
    const text = await loadDataset(join(dir, 'plain.json'), { seed: 5 });
    const urls: string[] = [];
    a.conversations.forEach((c, i) => {
      c.messages.forEach((m, j) => {
        assert.equal(messageText(m.content), text.conversations[i]!.messages[j]!.content, 'images leave the text as it was');
        if (m.role !== 'user') return;
        const parts = m.content as ContentPart[];
        assert.deepEqual(parts.map((p) => p.type), ['image_url', 'image_url', 'text']);
        for (const p of parts) if (p.type === 'image_url') urls.push(p.image_url.url);
      });
    });
    assert.equal(urls.length, 3 * 2 * 2);
    assert.equal(new Set(urls).size, urls.length, 'every image differs');
    for (const url of urls) {
      assert.ok(url.startsWith('data:image/png;base64,'));
      const chunks = pngChunks(Buffer.from(url.slice('data:image/png;base64,'.length), 'base64'));
      assert.deepEqual(chunks.map((c) => c.type), ['IHDR', 'IDAT', 'IEND']);
      const header = chunks[0]!.data;
      assert.deepEqual([header.readUInt32BE(0), header.readUInt32BE(4), header[8], header[9]], [20, 10, 8, 2]);
      assert.equal(inflateSync(chunks[1]!.data).length, (20 * 3 + 1) * 10, 'one filter byte and 20 RGB pixels per row');
    }
    const seeded = await loadDataset(file, { seed: 6 });
    assert.notDeepEqual(seeded.conversations[0]!.messages[0]!.content, a.conversations[0]!.messages[0]!.content);
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926, 'the CRC-32 check value');
  });

  test('bad image settings are ConfigErrors naming the key', async () => {
    const dir = tempDir('img-gen-bad');
    const file = join(dir, 'gen.json');
    for (const [images, pattern] of [
      [{ width: 0 }, /images\.width: expected an integer from 1 to 4096/],
      [{ turns: 'some' }, /images\.turns: expected "first" or "all"/],
      [{ num_images: 100 }, /images\.num_images: .* within 0 to 64/],
    ] as const) {
      writeFileSync(file, JSON.stringify(config(images)));
      await assert.rejects(loadDataset(file), pattern);
    }
  });
});
