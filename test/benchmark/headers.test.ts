import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseHeaders } from '../../src/benchmark/headers.js';
import { ConfigError } from '../../src/errors/index.js';

describe('--header', () => {
  test('accepts "Name: value" and "Name=value"; the first ":" or "=" splits', () => {
    assert.deepEqual(parseHeaders(['X-A: b', 'X-B=c', 'Authorization: Bearer abc==', 'X-C=d:e', 'X-Empty:']), {
      'X-A': 'b',
      'X-B': 'c',
      Authorization: 'Bearer abc==',
      'X-C': 'd:e',
      'X-Empty': '',
    });
  });

  test('a line without a separator or with a bad name is a ConfigError that never shows the value', () => {
    for (const [line, shown] of [
      ['NoSeparator', /no ":" or "="/],
      [': secret-value', /name ""/],
      ['Bad Name: secret-value', /name "Bad Name"/],
    ] as const) {
      assert.throws(
        () => parseHeaders([line]),
        (error: Error) => error instanceof ConfigError && /^--header: expected "Name: value" or "Name=value"/.test(error.message) && shown.test(error.message) && !error.message.includes('secret-value'),
      );
    }
  });
});
