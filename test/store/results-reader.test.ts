// The one reader of results.json (issue #32, part 2): report, compare and merge read a run's results.json through
// readResultsFile, which reads files of any 1.x schema_version and those from before schema_version existed.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DatasetError } from '../../src/errors/index.js';
import { readResultsFile } from '../../src/store/results-reader.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('results-reader');
after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, doc: unknown): string {
  mkdirSync(join(dir, name), { recursive: true });
  const path = join(dir, name, 'results.json');
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

const SUMMARY = { completed: 3, failed: 0, metrics: { ttft_ms: null } };

describe('readResultsFile', () => {
  test('a file from before schema_version is read, its first prefix_cache shape left out', () => {
    const stored = readResultsFile(
      write('legacy', { summary: SUMMARY, per_turn: [], model: 'm', stop_reason: 'completed', prefix_cache: { totals: { hit: 1 } }, config: { apiKey: 'sk-live-123' }, conversations: { total: 2, completed: 2 } }),
    );
    assert.equal(stored.schemaVersion, null);
    assert.equal(stored.prefixCache, null);
    assert.deepEqual(stored.facts, { model: 'm', stop_reason: 'completed' });
    assert.equal(stored.config.apiKey, '[redacted]', 'redacted again on reading');
    assert.deepEqual(stored.conversations, { total: 2, completed: 2 });
    assert.equal(stored.shard, null);
    assert.deepEqual(stored.warnings, []);
  });

  test('a newer minor is read: fields this chatload does not know, and values it does not list, are left alone', () => {
    const stored = readResultsFile(write('minor', { schema_version: '1.99.0', summary: SUMMARY, stop_reason: 'a_new_reason', a_new_field: { x: 1 }, shard: '1/4', warnings: ['w'] }));
    assert.equal(stored.schemaVersion, '1.99.0');
    assert.equal(stored.facts.stop_reason, 'a_new_reason');
    assert.equal(stored.shard, '1/4');
    assert.deepEqual(stored.warnings, ['w']);
  });

  test('another major, or a field of the wrong type, is a DatasetError naming the file and the field', () => {
    const refused = (doc: unknown, message: RegExp): void =>
      assert.throws(() => readResultsFile(write('bad', doc)), (error: unknown) => error instanceof DatasetError && message.test(error.message) && !error.message.includes('\n'));
    refused({ schema_version: '2.0.0', summary: SUMMARY }, /bad\/results\.json: schema_version 2\.0\.0 is not one this chatload reads, expected schema_version 1\.x\.y/);
    refused({ schema_version: '0.9.0', summary: SUMMARY }, /schema_version 0\.9\.0 .*written by an older chatload$/);
    refused({ summary: { ...SUMMARY, completed: '3' } }, /bad\/results\.json: summary\.completed: expected a number, got "3"$/);
    refused({ summary: SUMMARY, per_turn: [{ turn: 'one' }] }, /per_turn\[0\]\.turn: expected a number, got "one"$/);
    refused({ summary: SUMMARY, client_health: 'ok' }, /client_health: expected an object or null, got "ok"$/);
    refused({ schema_version: '1.0.0', summary: SUMMARY, prefix_cache: { totals: 5 } }, /prefix_cache\.totals: expected an object, got 5$/);
    refused([1], /bad\/results\.json: expected a JSON object \(a chatload results\.json\), got \[1\]$/);
    refused({ model: 'm' }, /summary: expected an object \(a chatload results\.json has one\), got nothing$/);
  });
});
