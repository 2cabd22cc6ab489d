import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hideMediaData } from '../../src/client/hide-media-data.js';

describe('hideMediaData', () => {
  test("a server's error quoting an image or audio data URL, or an input_audio part's data, keeps no media bytes", () => {
    const bytes = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';
    // vLLM's validation errors print the request's part as a Python repr; a JSON echo quotes it as JSON.
    const repr = `1 validation error: {'type': 'input_audio', 'input_audio': {'data': '${bytes}', 'format': 'flac'}}`;
    const json = `bad part {"data":"${bytes}"}`;
    const escaped = JSON.stringify({ error: { message: `bad part ${JSON.stringify({ data: bytes, format: 'flac' })}` } });
    const url = `could not decode data:audio/wav;base64,${bytes} nor data:image/png;base64,${bytes}`;
    for (const text of [repr, json, escaped, url]) {
      const hidden = hideMediaData(text);
      assert.ok(!hidden.includes('UklGRiQAAABX'), hidden);
      assert.match(hidden, /\[(audio|image) data\]/);
    }
    assert.match(hideMediaData(repr), /'data': '\[audio data\]', 'format': 'flac'/);
    // Short values and ordinary text stay as they are.
    assert.equal(hideMediaData(`{"data": "short"} and a data field`), `{"data": "short"} and a data field`);
  });
});
