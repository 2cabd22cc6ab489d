// `chatload merge --expect N --wait D` (issue #31, part 5): the merge Job of deploy/k8s/indexed-job.yaml starts with
// the shards' Job, so it must wait for every shard folder to be complete (results.json, or a crashed run's
// requests.jsonl with no live lock) and must not take a folder whose run is still writing. Real processes of
// bin/chatload.js, each run against its built-in simulator.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { lookAtShards } from '../../src/benchmark/merge-wait.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { folderGlob } from '../../src/store/folder-glob.js';
import { LOCK_FILE } from '../../src/store/run-lock.js';
import { isComplete, runFolderState } from '../../src/store/run-folder-state.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `chatload run` of shard I/2 of a small run against the built-in simulator, into `dir`. */
function runShard(index: number, dir: string): ReturnType<typeof runCli> {
  return runCli(['run', '-n', '16', '-p', '4', '--sim-profile', 'cpu-tiny', '--shard', `${index}/2`, '--no-report', '--quiet', '--output-dir', dir], { timeoutMs: 90_000 });
}

/** A lock file as a run writes it, held by `pid` on `host`. */
function writeLock(dir: string, pid: number, host = hostname()): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify({ pid, host, started: new Date().toISOString() })}\n`);
}

/** The pid of a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

interface MergedResults {
  completed: number;
  merged_from: Array<{ dir: string; finished: boolean; records: number; shard: string | null }>;
}

describe('merge --expect N --wait D', () => {
  test('waits for the second shard, started 3 s after the merge, and merges both once it has finished', { timeout: 180_000 }, async () => {
    const root = tempDir('merge-wait');
    try {
      const first = await runShard(0, join(root, 'shard-0'));
      assert.equal(first.code, 0, first.stderr);
      let waiting = '';
      const merge = runCli(['merge', join(root, 'shard-*'), '--expect', '2', '--wait', '60', '-o', join(root, 'merged')], {
        timeoutMs: 150_000,
        onStdout: (text) => (waiting = text),
      });
      // The merge has looked once and found one folder of two; 3 s later the second shard starts.
      while (!waiting.includes('waiting up to 60 s')) await sleep(20);
      assert.match(waiting, /missing: 1 more folder not there yet \(matching .*shard-\*\)/);
      await sleep(3000);
      const second = await runShard(1, join(root, 'shard-1'));
      assert.equal(second.code, 0, second.stderr);
      const merged = await merge;
      assert.equal(merged.code, 0, merged.stderr);
      assert.match(merged.stdout, /^merged 16 records from 2 runs into /);
      const doc = JSON.parse(readFileSync(join(root, 'merged', 'results.json'), 'utf8')) as MergedResults;
      // The second shard was merged whole, not as the lock-holding folder it was while it ran.
      assert.deepEqual(
        doc.merged_from.map((r) => [r.finished, r.records, r.shard]),
        [
          [true, readRequestsJsonl(join(root, 'shard-0', 'requests.jsonl')).length, '0/2'],
          [true, readRequestsJsonl(join(root, 'shard-1', 'requests.jsonl')).length, '1/2'],
        ],
      );
      assert.equal(doc.completed, 16);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('the wait ends first: exit 1 naming the missing shard; a running one is named with its lock; SIGINT ends the wait at once', { timeout: 180_000 }, async () => {
    const root = tempDir('merge-wait-ends');
    try {
      const first = await runShard(0, join(root, 'a', 'shard-0'));
      assert.equal(first.code, 0, first.stderr);
      const absent = await runCli(['merge', join(root, 'a', 'shard-*'), '--expect', '2', '--wait', '2s', '-o', join(root, 'out-1')], { timeoutMs: 60_000 });
      assert.equal(absent.code, 1, absent.stderr);
      assert.match(absent.stderr, /\nchatload: merge --expect 2: the wait \(2 s\) ended with 1 of 2 shard folders complete; missing: 1 more folder not there yet \(matching .*shard-\*\); shards not finished: 1\/2\n$/);

      // A folder whose run still holds its lock (this test process's pid: alive) is never taken, however long.
      writeLock(join(root, 'a', 'shard-1'), process.pid);
      const running = await runCli(['merge', join(root, 'a', 'shard-*'), '--expect', '2', '--wait', '1', '-o', join(root, 'out-2')], { timeoutMs: 60_000 });
      assert.equal(running.code, 1, running.stderr);
      assert.match(running.stderr, new RegExp(`missing: .*shard-1: running \\(lock held by pid ${process.pid} on .*\\); shards not finished: 1/2\\n$`));

      let said = '';
      const interrupted = runCli(['merge', join(root, 'a', 'shard-*'), '--expect', '2', '--wait', '10m', '-o', join(root, 'out-3')], {
        timeoutMs: 60_000,
        onStdout: (text, child) => {
          if (!said.includes('waiting') && text.includes('waiting')) child.kill('SIGINT');
          said = text;
        },
      });
      const stopped = await interrupted;
      assert.equal(stopped.code, 130, stopped.stderr);
      assert.match(stopped.stderr, /merge --expect 2: interrupted while waiting with 1 of 2 shard folders complete/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a crashed shard (records, no results.json, no live lock) is complete and merges as unfinished', { timeout: 120_000 }, async () => {
    const root = tempDir('merge-crashed');
    try {
      const first = await runShard(0, join(root, 'shard-0'));
      assert.equal(first.code, 0, first.stderr);
      const crashed = join(root, 'shard-1');
      mkdirSync(crashed);
      copyFileSync(join(root, 'shard-0', 'requests.jsonl'), join(crashed, 'requests.jsonl'));
      writeLock(crashed, deadPid());
      const merged = await runCli(['merge', join(root, 'shard-*'), '--expect', '2', '--wait', '30', '-o', join(root, 'merged')], { timeoutMs: 60_000 });
      assert.equal(merged.code, 0, merged.stderr);
      const doc = JSON.parse(readFileSync(join(root, 'merged', 'results.json'), 'utf8')) as MergedResults & { warnings: string[] };
      assert.deepEqual(doc.merged_from.map((r) => r.finished), [true, false]);
      assert.ok(doc.warnings.some((w) => w.includes('1 of the merged runs did not finish')), doc.warnings.join('\n'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('run folder states and folder patterns', () => {
  test('each state from the files a run leaves', () => {
    const root = tempDir('folder-state');
    try {
      const dir = (name: string): string => {
        mkdirSync(join(root, name), { recursive: true });
        return join(root, name);
      };
      writeFileSync(join(dir('finished'), 'results.json'), '{"summary": {}}');
      writeLock(join(root, 'finished'), process.pid); // writing its reports after results.json: complete already
      writeFileSync(join(dir('ended'), 'requests.jsonl'), '');
      writeFileSync(join(dir('ended-stale'), 'requests.jsonl'), '');
      writeLock(join(root, 'ended-stale'), deadPid());
      writeFileSync(join(dir('running'), 'requests.jsonl'), '');
      writeLock(join(root, 'running'), process.pid);
      writeLock(dir('elsewhere'), deadPid(), 'another-host'); // another machine's pid cannot be checked: running
      dir('empty');
      const kinds = ['finished', 'ended', 'ended-stale', 'running', 'elsewhere', 'empty', 'absent'].map((name) => runFolderState(join(root, name)));
      assert.deepEqual(
        kinds.map((s) => s.kind),
        ['finished', 'ended', 'ended', 'running', 'running', 'empty', 'absent'],
      );
      assert.deepEqual(kinds.map(isComplete), [true, true, true, false, false, false, false]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('patterns match folders as the shell does, anew at each look; the output folder is never a shard', () => {
    const root = tempDir('folder-glob');
    try {
      for (const name of ['shard-0', 'shard-1', 'shard-10', '.shard-x', 'merged', 'x[1]']) mkdirSync(join(root, 'run', name), { recursive: true });
      writeFileSync(join(root, 'run', 'shard-file'), '');
      symlinkSync(join(root, 'run', 'shard-0'), join(root, 'run', 'shard-link'));
      const names = (pattern: string): string[] => folderGlob(join(root, pattern)).map((p) => p.slice(root.length + 1));
      assert.deepEqual(names('run/shard-*'), ['run/shard-0', 'run/shard-1', 'run/shard-10', 'run/shard-link'], 'folders only, no dot folder');
      assert.deepEqual(names('run/shard-?'), ['run/shard-0', 'run/shard-1']);
      assert.deepEqual(names('run/shard-[!0]'), ['run/shard-1']);
      assert.deepEqual(names('r*/s*-1*'), ['run/shard-1', 'run/shard-10']);
      assert.deepEqual(names('run/.*'), ['run/.shard-x']);
      assert.deepEqual(names('nowhere/*'), []);
      const look = lookAtShards([join(root, 'run', '*')], 9, join(root, 'run', 'merged'));
      assert.ok(!look.folders.includes(join(root, 'run', 'merged')));
      // A path with a wildcard character that is a folder itself is that folder.
      assert.deepEqual(lookAtShards([join(root, 'run', 'x[1]')], 1).folders, [join(root, 'run', 'x[1]')]);
      mkdirSync(join(root, 'run', 'shard-2'));
      assert.ok(names('run/shard-*').includes('run/shard-2'), 'a folder made since is found');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
