// A heading's stop reason (issue #34): "completed" only when no conversation failed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stopText } from '../../src/report/stop-text.js';

test('a run that ended with failed conversations does not read "completed"; other reasons are as they are', () => {
  assert.equal(stopText('completed', { total: 38, failed: 0 }), 'completed');
  assert.equal(stopText('completed', { total: 38, failed: 13 }), 'ended: 13 of 38 conversations failed');
  assert.equal(stopText('completed', { total: 1, failed: 1 }), 'ended: 1 of 1 conversation failed');
  assert.equal(stopText('max_requests', { total: 38, failed: 13 }), 'max_requests');
  assert.equal(stopText('completed', null), 'completed');
});
