// Counts and their nouns (issue #34, item 7): "1 conversations were started", "merged 1 split parts".
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeShareGptReport } from '../../src/conversation/sharegpt.js';
import { unfinishedWarning } from '../../src/load/run-load.js';
import { counted, wasWere } from '../../src/util/plural.js';

describe('counted', () => {
  test('singular for exactly one, the plural for every other count', () => {
    assert.equal(counted(1, 'conversation'), '1 conversation');
    assert.equal(counted(0, 'conversation'), '0 conversations');
    assert.equal(counted(2, 'split part'), '2 split parts');
    assert.equal(counted(1, 'try', 'tries'), '1 try');
    assert.equal(counted(3, 'try', 'tries'), '3 tries');
    assert.equal(counted(1500, 'record', undefined, '1,500'), '1,500 records');
    assert.deepEqual([wasWere(1), wasWere(2)], ['was', 'were']);
  });
});

describe('the messages that counted', () => {
  const counts = (unfinished: number) => ({ total: 4, completed: 4 - unfinished, failed: 0, dropped: 0, unfinished, not_started: 0 });

  test('unfinished conversations', () => {
    assert.equal(unfinishedWarning(counts(1), 'max_requests'), '1 conversation was started but not finished when the run stopped (max_requests); it is counted as unfinished');
    assert.equal(unfinishedWarning(counts(3), 'duration'), '3 conversations were started but not finished when the run stopped (duration); they are counted as unfinished');
    assert.equal(unfinishedWarning(counts(0), 'duration'), undefined);
  });

  test("a ShareGPT file's report", () => {
    assert.equal(describeShareGptReport({ items: 1, mergedParts: 1, truncated: 0, dropped: {}, kept: 1 }), 'kept 1 conversation from 1 item; merged 1 split part; dropped none');
    assert.equal(describeShareGptReport({ items: 5, mergedParts: 2, truncated: 0, dropped: { 'no user message': 1 }, kept: 2 }), 'kept 2 conversations from 5 items; merged 2 split parts; dropped 1 no user message');
  });
});
