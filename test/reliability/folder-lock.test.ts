// One run per folder, even when two start at once (issue #35, item 1): the output folder is claimed with an atomic
// lock file before the server is contacted, so the second run exits 2 before sending anything. A lock left by a run
// that died is recognised as stale and replaced; a default folder (named by the second) taken by another run gets a
// suffix instead of mixing the two.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/errors/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { claimRunFolder, LOCK_FILE } from '../../src/store/run-lock.js';
import { runCli } from '../helpers/cli.js';
import { syntheticConversations } from '../helpers/datasets.js';
import { startFixedTimingServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('the output folder lock', () => {
  test('a second run into a folder in use exits 2 before sending anything; the first is unmixed', { timeout: 90_000 }, async () => {
    // The first run must outlast the second's start-up: 12 requests of ~450 ms, ~5.4 s. At 40 ms to the first token
    // (~1.1 s in all) a second process started beside a full test suite found the first run already done.
    const server = await startFixedTimingServer({ ttftMs: 400, itlMs: 5, tokens: 10 });
    const dir = tempDir('lock-two');
    try {
      const input = join(dir, 'in.json');
      writeFileSync(input, JSON.stringify(syntheticConversations({ count: 4, userTurns: () => 3 })));
      const out = join(dir, 'run');
      const first = runCli(['run', '-u', server.url, '-i', input, '-p', '1', '--no-report', '--output-dir', out], { timeoutMs: 80_000 });
      // Once the first run holds the folder (its lock is there), the second starts.
      while (!existsSync(join(out, LOCK_FILE))) await sleep(10);
      const second = await runCli(['run', '-u', server.url, '-i', input, '-p', '1', '--no-report', '--output-dir', out], { timeoutMs: 60_000 });
      assert.equal(second.code, 2, second.stderr);
      assert.match(second.stderr, /^chatload: --output-dir .*run: another chatload run \(pid \d+ on .*, started .*\) is using it; choose another folder, or remove .*chatload\.lock if that run is gone\n$/);
      const done = await first;
      assert.equal(done.code, 0, done.stderr);
      const records = readRequestsJsonl(join(out, 'requests.jsonl'));
      assert.equal(records.length, 12, 'only the first run wrote records');
      assert.equal(server.chatBodies.length, 12, 'the second run sent nothing');
      assert.ok(!existsSync(join(out, LOCK_FILE)), 'the lock is removed when the run ends');
    } finally {
      await server.close();
    }
  });

  test('a lock left by a run that died is stale: the next run replaces it', { timeout: 60_000 }, async () => {
    const server = await startFixedTimingServer({ ttftMs: 1, itlMs: 1, tokens: 4 });
    const dir = tempDir('lock-stale');
    try {
      const input = join(dir, 'in.json');
      writeFileSync(input, JSON.stringify(syntheticConversations({ count: 2, userTurns: () => 2 })));
      const out = join(dir, 'run');
      mkdirSync(out, { recursive: true });
      // The pid of a process that has ended, on this machine: what a killed run leaves.
      const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
      writeFileSync(join(out, LOCK_FILE), JSON.stringify({ pid: dead, host: hostname(), started: '2026-01-01T00:00:00.000Z' }));
      const run = await runCli(['run', '-u', server.url, '-i', input, '--no-report', '--output-dir', out]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(readRequestsJsonl(join(out, 'requests.jsonl')).length, 4);
      assert.ok(!existsSync(join(out, LOCK_FILE)));
    } finally {
      await server.close();
    }
  });

  test('a default folder held by another run, or used by one, gets a suffix; a given one is refused', () => {
    const dir = tempDir('lock-default');
    const fallback = join(dir, 'chatload-results', '2026-12-01T22-30-00Z');
    const first = claimRunFolder(undefined, fallback, false, false);
    assert.equal(first.outputDir, fallback);
    // This process holds it (a live pid): the next default folder is the suffixed one.
    const second = claimRunFolder(undefined, fallback, false, false);
    assert.equal(second.outputDir, `${fallback}-2`);
    assert.throws(() => claimRunFolder(fallback, fallback, false, false), (error: unknown) => error instanceof ConfigError && /is using it/.test(error.message));
    // Released, but it holds a finished run: a default folder skips it too.
    writeFileSync(join(fallback, 'results.json'), '{}');
    first.release();
    assert.ok(!existsSync(join(fallback, LOCK_FILE)));
    second.release();
    const third = claimRunFolder(undefined, fallback, false, false);
    assert.equal(third.outputDir, `${fallback}-2`);
    assert.match(readFileSync(join(third.outputDir, LOCK_FILE), 'utf8'), new RegExp(`"pid":${process.pid}`));
    third.release();
  });
});
