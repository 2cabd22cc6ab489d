// Crash safety: `kill -9` of a `chatload run` process mid-run leaves requests.jsonl valid up to its last complete
// line, with every request the process reported, and `chatload report` summarizes the unfinished run.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { runCli } from '../helpers/cli.js';
import { syntheticConversations } from '../helpers/datasets.js';
import { startFixedTimingServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

describe('crash safety', () => {
  test('kill -9 mid-run: requests.jsonl holds every reported request; chatload report renders the partial run', { timeout: 90_000 }, async () => {
    const server = await startFixedTimingServer({ ttftMs: 10, itlMs: 10, tokens: 20 });
    const dir = tempDir('kill9');
    try {
      const input = join(dir, 'in.json');
      writeFileSync(input, JSON.stringify(syntheticConversations({ count: 50, userTurns: () => 10 })));
      let reported = 0;
      let killed = false;
      const result = await runCli(['run', '-u', server.url, '-i', input, '-p', '4', '-v', '--output-dir', dir, '--csv'], {
        onStdout: (text, child) => {
          // -v prints a line per request after its record was written (the sink writes first).
          reported = (text.match(/ turn \d+ \(client \d+\): ttft/g) ?? []).length;
          if (!killed && reported >= 12) {
            killed = true;
            child.kill('SIGKILL');
          }
        },
      });
      assert.ok(killed, `the run reported requests before the kill: ${result.stderr}`);
      assert.equal(result.signal, 'SIGKILL');
      assert.ok(!existsSync(join(dir, 'results.json')), 'no results.json: the run did not finish');

      const raw = readFileSync(join(dir, 'requests.jsonl'), 'utf8');
      const lines = raw.split('\n');
      // The piece after the last newline is empty or a torn line; everything before it must be whole.
      const complete = lines.slice(0, -1);
      for (const [i, line] of complete.entries()) assert.doesNotThrow(() => JSON.parse(line), `line ${i + 1} is valid JSON`);
      const records = readRequestsJsonl(join(dir, 'requests.jsonl'));
      assert.equal(records.length, complete.length);
      assert.ok(records.length >= reported, `${records.length} records on disk, ${reported} reported`);
      assert.ok(records.length < 500, 'it was killed mid-run');

      const report = await runCli(['report', dir, '--csv', '--excel'], { timeoutMs: 60_000 });
      assert.equal(report.code, 0, report.stderr);
      assert.match(report.stderr, /note: .*/);
      const html = readFileSync(join(dir, 'report.html'), 'utf8');
      assert.match(html, /This run did not finish/);
      // The CSV has one row per record (plus the header): the report used every complete line.
      const csvRows = readFileSync(join(dir, 'requests.csv'), 'utf8').trimEnd().split('\r\n');
      assert.equal(csvRows.length, records.length + 1);
      assert.ok(existsSync(join(dir, 'report.xlsx')));
    } finally {
      await server.close();
    }
  });

  test('a torn last line (a crash inside write) is skipped by chatload report', { timeout: 60_000 }, async () => {
    const server = await startFixedTimingServer({ ttftMs: 1, itlMs: 1, tokens: 4 });
    const dir = tempDir('torn');
    try {
      const input = join(dir, 'in.json');
      writeFileSync(input, JSON.stringify(syntheticConversations({ count: 3, userTurns: () => 2 })));
      const run = await runCli(['run', '-u', server.url, '-i', input, '--no-report', '--output-dir', dir]);
      assert.equal(run.code, 0, run.stderr);
      // Make it look killed mid-write: no results.json, half a record at the end.
      const requests = join(dir, 'requests.jsonl');
      const text = readFileSync(requests, 'utf8');
      writeFileSync(requests, `${text}{"conversation_id":"conv-9","tu`);
      rmSync(join(dir, 'results.json'));
      const report = await runCli(['report', dir, '--csv']);
      assert.equal(report.code, 0, report.stderr);
      const csvRows = readFileSync(join(dir, 'requests.csv'), 'utf8').trimEnd().split('\r\n');
      assert.equal(csvRows.length, 6 + 1, 'six whole records, the torn one skipped');
    } finally {
      await server.close();
    }
  });
});
