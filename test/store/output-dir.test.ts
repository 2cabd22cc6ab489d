// The output folder is checked before anything is sent (issue #16): created, then a probe file written, fsynced and
// removed. Tests run as root here, so permission bits cannot fail a write: the honest failures are a path under a
// regular file (ENOTDIR) and an injected writer that fails as a full disk does (ENOSPC).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { ConfigError, ExitCode } from '../../src/errors/index.js';
import { describeFsError, prepareOutputDir } from '../../src/store/output-dir.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { MODELS_RESPONSE, SHORT_ANSWER, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('output-dir');
after(() => rmSync(dir, { recursive: true, force: true }));

/** A regular file, and a folder path under it: creating that folder fails with ENOTDIR. */
function pathUnderAFile(): string {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a folder');
  return join(file, 'out');
}

/** A writeSync that fails as a full disk does. */
const fullDisk = (): number => {
  throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: 'ENOSPC' });
};

describe('prepareOutputDir', () => {
  test('creates the folder and leaves no probe file behind', () => {
    const out = join(dir, 'fresh', 'nested');
    assert.equal(prepareOutputDir(out), out);
    assert.deepEqual(readdirSync(out), []);
  });

  test('a path under a regular file: one-line ConfigError naming ENOTDIR', () => {
    const out = pathUnderAFile();
    assert.throws(
      () => prepareOutputDir(out),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.exitCode, ExitCode.badInput);
        assert.equal(error.message, `--output-dir ${out}: cannot write there (ENOTDIR: not a directory)`);
        return true;
      },
    );
  });

  test('a full disk (the probe write fails): ENOSPC, and the probe file is removed', () => {
    const out = join(dir, 'full');
    assert.throws(() => prepareOutputDir(out, fullDisk), { message: `--output-dir ${out}: cannot write there (ENOSPC: no space left on device)` });
    assert.deepEqual(readdirSync(out), [], 'no probe file left');
  });

  test('describeFsError keeps the code and the cause, not the path', () => {
    const error = Object.assign(new Error("EACCES: permission denied, open '/x/y'"), { code: 'EACCES' });
    assert.equal(describeFsError(error), 'EACCES: permission denied');
    assert.equal(describeFsError(new Error('plain')), 'plain');
  });
});

describe('runBenchmark checks the output folder before any network traffic', () => {
  test('an unwritable --output-dir is exit 2 and no request reaches the server', { timeout: 30_000 }, async () => {
    const server = await startScriptedServer((request) => (request.method === 'GET' ? MODELS_RESPONSE : SHORT_ANSWER));
    try {
      const out = pathUnderAFile();
      await assert.rejects(
        runBenchmark({ url: server.url, inputFile: writeSyntheticDataset(dir, 1, 2), outputDir: out }),
        (error: unknown) => error instanceof ConfigError && /cannot write there \(ENOTDIR/.test(error.message),
      );
      assert.equal(server.requests.length, 0, 'the server was never contacted');
      assert.equal(existsSync(out), false);
    } finally {
      await server.close();
    }
  });
});
