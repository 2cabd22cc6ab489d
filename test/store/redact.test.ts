import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isSecretKey, REDACTED, redactSecrets } from '../../src/store/redact.js';
import { redactText } from '../../src/util/redact-text.js';

describe('redactSecrets', () => {
  test('redacts secret keys at any depth and keeps token counts', () => {
    const config = {
      url: 'http://127.0.0.1:8000',
      api_key: 'sk-123',
      apiKey: 'sk-456',
      'x-api-key': 'k',
      nested: { Authorization: 'Bearer abc', hf_token: 'hf_x', client_secret: 's', password: 'p', token: 't' },
      max_tokens: 128,
      input_num_tokens: 10,
      cached_tokens: 5,
      limit_max_tokens: -1,
      tokenizer: 'gpt2',
      missing_api_key: null,
    };
    const out = redactSecrets(config);
    assert.equal(out.api_key, '[redacted]');
    assert.equal(out.apiKey, '[redacted]');
    assert.equal(out['x-api-key'], '[redacted]');
    assert.deepEqual(out.nested, {
      Authorization: '[redacted]',
      hf_token: '[redacted]',
      client_secret: '[redacted]',
      password: '[redacted]',
      token: '[redacted]',
    });
    assert.equal(out.max_tokens, 128);
    assert.equal(out.input_num_tokens, 10);
    assert.equal(out.cached_tokens, 5);
    assert.equal(out.limit_max_tokens, -1);
    assert.equal(out.tokenizer, 'gpt2');
    assert.equal(out.missing_api_key, null, 'nothing to hide');
    assert.equal(out.url, 'http://127.0.0.1:8000');
    assert.equal(config.api_key, 'sk-123', 'the input is not modified');
  });

  test('redacts header strings and URL passwords', () => {
    const out = redactSecrets({
      header: ['Authorization: Bearer abc', 'X-Api-Key=xyz', 'X-Session-ID: 7', 'Content-Type: application/json'],
      url: 'http://user:hunter2@127.0.0.1:8000/v1',
    });
    assert.deepEqual(out.header, ['Authorization: [redacted]', 'X-Api-Key=[redacted]', 'X-Session-ID: 7', 'Content-Type: application/json']);
    assert.equal(out.url, 'http://user:[redacted]@127.0.0.1:8000/v1');
    // A lone user name is the credential (a token as user: curl sends it as Basic auth).
    assert.equal(redactSecrets('https://tok-123@h/v1'), 'https://[redacted]@h/v1');
  });

  test('copies deeply, survives cycles, keeps non-plain objects', () => {
    const date = new Date(0);
    const cyclic: Record<string, unknown> = { a: [1, { b: 2 }], date };
    cyclic.self = cyclic;
    const out = redactSecrets(cyclic);
    assert.notEqual(out, cyclic);
    assert.notEqual(out.a, cyclic.a);
    assert.deepEqual(out.a, [1, { b: 2 }]);
    assert.equal(out.self, '[circular]');
    assert.equal(out.date, date);
    assert.equal(redactSecrets('plain'), 'plain');
    assert.equal(redactSecrets(3), 3);
  });

  test('isSecretKey', () => {
    for (const key of ['api_key', 'API-KEY', 'authorization', 'access_token', 'secret', 'db_password']) assert.ok(isSecretKey(key), key);
    for (const key of ['max_tokens', 'output_num_tokens', 'total_cached_tokens', 'model', 'tokenizer']) assert.ok(!isSecretKey(key), key);
  });
});

describe('redactText: the one replacement of known secret strings, with the same mark as redactSecrets', () => {
  test('replaces every occurrence, longest secret first, in one pass', () => {
    assert.equal(REDACTED, '[redacted]');
    assert.equal(redactText('key sk-123 then sk-123 again', ['sk-123']), `key ${REDACTED} then ${REDACTED} again`);
    // The Basic token and a part of it: the longer goes whole, and the mark is not searched again ("act" is in "redacted").
    assert.equal(redactText('Basic abc-act-xyz and act', ['act', 'abc-act-xyz']), `Basic ${REDACTED} and ${REDACTED}`);
    assert.equal(redactText('a.b* (x)', ['.b*', '(x)']), `a${REDACTED} ${REDACTED}`, 'regex characters are literal');
  });

  test('leaves text without secrets, and empty secrets, alone', () => {
    assert.equal(redactText('nothing here', ['', 'sk-1']), 'nothing here');
    assert.equal(redactText('', ['sk-1']), '');
  });
});
