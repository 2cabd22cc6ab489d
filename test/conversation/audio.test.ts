import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadDataset } from '../../src/conversation/index.js';
import { audioPartProblem } from '../../src/conversation/content-parts.js';
import { DatasetError } from '../../src/errors/index.js';
import { encodeWav, sineSamples } from '../../src/synth/wav.js';
import { displayText, messageText, type ContentPart } from '../../src/tokenizer/index.js';
import { readAudioHeader } from '../../src/util/audio-header.js';
import { tempDir } from '../helpers/tmp.js';

/** Two seconds of a 440 Hz tone at 8 kHz, as base64 WAV. */
const WAV = encodeWav(sineSamples(440, 2, 8000), 8000).toString('base64');

/**
 * An MP3 frame header (MPEG-1 layer III, 128 kbit/s, 44.1 kHz, stereo: FF FB 90 00) at the start of a frame of
 * `frameBytes` bytes; `xingFrames` puts a Xing header with that frame count where LAME writes it (after the 32 bytes
 * of side information).
 */
function mp3Frame(frameBytes: number, xingFrames?: number): Buffer {
  const frame = Buffer.alloc(frameBytes);
  frame.set([0xff, 0xfb, 0x90, 0x00]);
  if (xingFrames !== undefined) {
    frame.write('Xing', 36, 'latin1');
    frame.writeUInt32BE(1, 40); // flags: the frame count is present
    frame.writeUInt32BE(xingFrames, 44);
  }
  return frame;
}

/** The fields of a WAV header, read here independently of src/util/audio-header.ts. */
function wavHeader(bytes: Buffer): { riff: string; wave: string; format: number; channels: number; sampleRate: number; bits: number; dataBytes: number } {
  return {
    riff: bytes.toString('latin1', 0, 4),
    wave: bytes.toString('latin1', 8, 12),
    format: bytes.readUInt16LE(20),
    channels: bytes.readUInt16LE(22),
    sampleRate: bytes.readUInt32LE(24),
    bits: bytes.readUInt16LE(34),
    dataBytes: bytes.readUInt32LE(40),
  };
}

describe('audio headers', () => {
  test('a WAV: its duration is the data size over the byte rate, past any chunk before the data', () => {
    assert.deepEqual(readAudioHeader(WAV, 'wav'), { seconds: 2, exact: true });
    // A LIST chunk (odd-sized, so padded) between fmt and data, as many recorders write.
    const plain = Buffer.from(WAV, 'base64');
    const list = Buffer.alloc(8 + 5 + 1);
    list.write('LIST', 0, 'latin1');
    list.writeUInt32LE(5, 4);
    const withList = Buffer.concat([plain.subarray(0, 36), list, plain.subarray(36)]);
    assert.deepEqual(readAudioHeader(withList.toString('base64'), 'wav'), { seconds: 2, exact: true });
    assert.match(readAudioHeader(Buffer.from('RIFF\0\0\0\0AVI LIST').toString('base64'), 'wav') as string, /not a WAV file/);
  });

  test('an MP3: the Xing frame count when there is one, else the bytes over the first frame bit rate; an ID3v2 tag is skipped', () => {
    // 100 frames of 417 bytes at 128 kbit/s: 41,700 bytes, 2.606 s estimated; 1152 samples a frame at 44.1 kHz.
    const cbr = Buffer.concat(Array.from({ length: 100 }, () => mp3Frame(417)));
    const estimated = readAudioHeader(cbr.toString('base64'), 'mp3') as { seconds: number; exact: boolean };
    assert.equal(estimated.exact, false);
    assert.ok(Math.abs(estimated.seconds - (41_700 * 8) / 128_000) < 1e-9);
    const id3 = Buffer.alloc(10 + 300);
    id3.write('ID3', 0, 'latin1');
    id3.set([4, 0, 0, 0, 0, 0x02, 0x2c], 3); // version 2.4.0, no flags, size 300 as syncsafe (2 * 128 + 44)
    const tagged = Buffer.concat([id3, mp3Frame(417, 50), cbr]);
    assert.deepEqual(readAudioHeader(tagged.toString('base64'), 'mp3'), { seconds: (50 * 1152) / 44100, exact: true });
    assert.match(readAudioHeader(WAV, 'mp3') as string, /not an MP3 file/);
  });
});

describe('audio parts in datasets', () => {
  test('a conversation with input_audio parts loads as it is; local counts see the text, the terminal a placeholder', async () => {
    const dir = tempDir('audio-load');
    const content = [{ type: 'input_audio', input_audio: { data: WAV, format: 'wav' } }, { type: 'text', text: 'What is this sound?' }];
    const file = join(dir, 'd.jsonl');
    writeFileSync(file, `${JSON.stringify({ id: 'a1', messages: [{ role: 'user', content }, { role: 'assistant', content: 'A tone.' }] })}\n`);
    const loaded = await loadDataset(file);
    const parts = loaded.conversations[0]!.messages[0]!.content as ContentPart[];
    assert.deepEqual(parts, content);
    assert.equal(messageText(parts), 'What is this sound?');
    assert.equal(displayText(parts), '[audio wav 2.0 s]What is this sound?');
  });

  test('bad audio parts are one-line errors naming the message and part, never quoting the audio', async () => {
    const dir = tempDir('audio-bad');
    const secret = 'QUJDREVGR0hJSktMTU5PUA'.repeat(40);
    const cases: Array<[unknown, RegExp]> = [
      [{ data: WAV, format: 'flac' }, /content\[0\]: expected "input_audio.format" to be "wav" or "mp3", got "flac"/],
      [{ data: `${secret}*${secret}`, format: 'wav' }, /content\[0\]: expected "input_audio.data" to be base64, found a character that is not base64 at offset 880/],
      [{ data: `${secret}A`, format: 'wav' }, /not a multiple of 4/],
      [{ data: `data:audio/wav;base64,${secret}`, format: 'wav' }, /bare base64, not a data URL/],
      [{ data: `${secret}AA==`, format: 'wav' }, /"input_audio.data" \(format "wav"\) is not a WAV file/],
      [{ data: WAV, format: 'mp3' }, /is not an MP3 file/],
      ['x', /expected "input_audio" to be an object/],
    ];
    for (const [inputAudio, pattern] of cases) {
      const file = join(dir, 'd.json');
      writeFileSync(file, JSON.stringify([{ id: 'c', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: inputAudio }] }] }]));
      await assert.rejects(loadDataset(file), (error: unknown) => {
        assert.ok(error instanceof DatasetError);
        assert.match(error.message, pattern);
        assert.match(error.message, /conversation 0 \(id "c"\), message 0/);
        assert.ok(!error.message.includes('QUJDREVG'), 'no audio bytes in the message');
        assert.ok(!error.message.includes('\n'));
        return true;
      });
    }
    assert.match(audioPartProblem({ data: WAV, format: 'wav' }, 100)!, /an audio part of [\d,]+ base64 characters, over the bound of 100/);
    assert.equal(audioPartProblem({ data: WAV, format: 'wav' }), undefined);
  });
});

describe('synthetic audio from the generator', () => {
  const config = (audio: object) => ({
    filetype: 'generate_conversations',
    num_conversations: 3,
    prompt_input: { num_turns: { distribution: 'constant', value: 4 }, num_tokens: { distribution: 'constant', value: 40 } },
    prompt_output: { num_tokens: { distribution: 'constant', value: 10 } },
    audio,
  });

  test('valid WAVs of the configured duration, deterministic for a seed, different per part, the text unchanged', async () => {
    const dir = tempDir('audio-gen');
    const file = join(dir, 'gen.json');
    writeFileSync(file, JSON.stringify(config({ num_audios: 2, duration_sec: { distribution: 'uniform', min: 0.5, max: 1.5 }, sample_rate: 8000, turns: 'all' })));
    const a = await loadDataset(file, { seed: 5 });
    const b = await loadDataset(file, { seed: 5 });
    assert.deepEqual(a.conversations, b.conversations, 'same seed, same audio');
    const { audio: _none, ...plain } = config({});
    writeFileSync(join(dir, 'plain.json'), JSON.stringify(plain));
    const text = await loadDataset(join(dir, 'plain.json'), { seed: 5 });
    const data: string[] = [];
    a.conversations.forEach((c, i) => {
      c.messages.forEach((m, j) => {
        assert.equal(messageText(m.content), text.conversations[i]!.messages[j]!.content, 'audio leaves the text as it was');
        if (m.role !== 'user') return;
        const parts = m.content as ContentPart[];
        assert.deepEqual(parts.map((p) => p.type), ['input_audio', 'input_audio', 'text']);
        for (const p of parts) if (p.type === 'input_audio') data.push(p.input_audio.data);
      });
    });
    assert.equal(data.length, 3 * 2 * 2);
    assert.equal(new Set(data).size, data.length, 'every part differs');
    for (const d of data) {
      const bytes = Buffer.from(d, 'base64');
      const h = wavHeader(bytes);
      assert.deepEqual({ ...h, dataBytes: 0 }, { riff: 'RIFF', wave: 'WAVE', format: 1, channels: 1, sampleRate: 8000, bits: 16, dataBytes: 0 });
      assert.equal(bytes.readUInt32LE(4), bytes.length - 8, 'the RIFF size');
      assert.equal(h.dataBytes, bytes.length - 44);
      const seconds = h.dataBytes / 2 / 8000;
      assert.ok(seconds >= 0.5 && seconds <= 1.5, `${seconds} s`);
      // A sine: the samples swing both ways, at a quarter of full scale.
      const samples = new Int16Array(bytes.buffer.slice(bytes.byteOffset + 44, bytes.byteOffset + bytes.length));
      assert.equal(Math.max(...samples), 8191);
      assert.equal(Math.min(...samples), -8191);
    }
    const seeded = await loadDataset(file, { seed: 6 });
    assert.notDeepEqual(seeded.conversations[0]!.messages[0]!.content, a.conversations[0]!.messages[0]!.content);
  });

  test('audio goes after the images and before the text', async () => {
    const dir = tempDir('audio-gen-images');
    const file = join(dir, 'gen.json');
    writeFileSync(file, JSON.stringify({ ...config({ duration_sec: 0.2 }), images: { width: 4, height: 4 } }));
    const loaded = await loadDataset(file, { seed: 1 });
    assert.deepEqual((loaded.conversations[0]!.messages[0]!.content as ContentPart[]).map((p) => p.type), ['image_url', 'input_audio', 'text']);
    assert.equal(typeof loaded.conversations[0]!.messages[2]!.content, 'string', 'turns "first": later user messages have none');
  });

  test('bad audio settings are ConfigErrors naming the key', async () => {
    const dir = tempDir('audio-gen-bad');
    const file = join(dir, 'gen.json');
    for (const [audio, pattern] of [
      [{ sample_rate: 100 }, /audio\.sample_rate: expected an integer from 8000 to 48000/],
      [{ turns: 'some' }, /audio\.turns: expected "first" or "all"/],
      [{ num_audios: 100 }, /audio\.num_audios: .* within 0 to 64/],
      [{ duration_sec: 3600 }, /audio\.duration_sec: .* within 0 to 786 seconds at 16,000 Hz/],
      [{ duration_sec: { distribution: 'lognormal', average: 10 } }, /audio\.duration_sec: /],
    ] as const) {
      writeFileSync(file, JSON.stringify(config(audio)));
      await assert.rejects(loadDataset(file), pattern);
    }
  });
});
