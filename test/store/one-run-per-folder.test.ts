// One run per folder (issue #16): a second run into a folder holding a run is refused (exit 2) before anything is
// sent, unless --overwrite, which removes the previous run's files first. Runs use the built-in simulator.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { ConfigError, ExitCode } from '../../src/errors/index.js';
import { claimOutputDir, RUN_FILES } from '../../src/store/output-dir.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('one-run');
after(() => rmSync(dir, { recursive: true, force: true }));

describe('claimOutputDir', () => {
  test('an empty folder, or one holding other files, is taken as is', () => {
    const out = tempDir('claim-other');
    writeFileSync(join(out, 'dataset.json'), '[]');
    claimOutputDir(out, false);
    assert.deepEqual(readdirSync(out), ['dataset.json']);
    rmSync(out, { recursive: true, force: true });
  });

  test('a previous run is refused, naming its files and --overwrite', () => {
    const out = tempDir('claim-refused');
    writeFileSync(join(out, 'results.json'), '{}');
    assert.throws(
      () => claimOutputDir(out, false),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.exitCode === ExitCode.badInput &&
        error.message === `--output-dir ${out}: holds a previous run (results.json); pass --overwrite to replace it, or choose another folder`,
    );
    rmSync(out, { recursive: true, force: true });
  });

  test('--overwrite removes every file of the previous run and nothing else', () => {
    const out = tempDir('claim-overwrite');
    for (const name of [...RUN_FILES, 'dataset.json']) writeFileSync(join(out, name), 'x');
    claimOutputDir(out, true);
    assert.deepEqual(readdirSync(out), ['dataset.json']);
    rmSync(out, { recursive: true, force: true });
  });
});

describe('runBenchmark: one run per folder', () => {
  test('a second run is refused; with --overwrite it replaces the first', { timeout: 60_000 }, async () => {
    const out = join(dir, 'runs');
    const options = { maxNumRequests: 4, numClients: 2, simProfile: 'cpu-tiny', seed: 1, outputDir: out };
    const first = await runBenchmark(options);
    assert.equal(readRequestsJsonl(first.files.requests).length, 4);
    await assert.rejects(runBenchmark(options), (error: unknown) => error instanceof ConfigError && /holds a previous run \(requests\.jsonl, results\.json\)/.test(error.message));
    assert.equal(readRequestsJsonl(first.files.requests).length, 4, 'the refused run wrote nothing');
    const second = await runBenchmark({ ...options, maxNumRequests: 3, overwrite: true });
    assert.equal(readRequestsJsonl(second.files.requests).length, 3, 'only the second run is on disk');
    assert.equal(second.summary.completed, 3);
    assert.ok(existsSync(second.files.results));
  });
});
