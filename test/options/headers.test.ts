import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/errors/index.js';
import { planRun } from '../../src/options/run-plan.js';
import { headersSchema } from '../../src/options/values/headers.js';

describe('--header', () => {
  test('accepts "Name: value" and "Name=value"; the first ":" or "=" splits', () => {
    assert.deepEqual(headersSchema.parse(['X-A: b', 'X-B=c', 'Authorization: Bearer abc==', 'X-C=d:e', 'X-Empty:']), {
      'X-A': 'b',
      'X-B': 'c',
      Authorization: 'Bearer abc==',
      'X-C': 'd:e',
      'X-Empty': '',
    });
    assert.deepEqual(planRun({ headers: ['X-B=c'] }).target.headers, { 'X-B': 'c' });
  });

  test('a line without a separator or with a bad name is a one-line ConfigError that never shows the value', () => {
    for (const line of ['NoSeparator', ': secret-value', 'Bad Name: secret-value']) {
      assert.throws(
        () => planRun({ headers: [line] }),
        (error: Error) =>
          error instanceof ConfigError && /--header.*expected "Name: value" or "Name=value"/.test(error.message) && !error.message.includes('secret-value') && !error.message.includes('\n'),
        line,
      );
    }
  });
});
