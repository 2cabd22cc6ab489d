import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { displayWidth } from '../../src/report/text-table.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

// Issue #34, "the terminal fits", through the real CLI against the built-in simulator (its fast cpu-tiny profile).

describe('the summary fits the terminal', () => {
  test('with COLUMNS=60 (no terminal) every line of the summary is at most 60 columns; without it the table is whole', { timeout: 60_000 }, async () => {
    const dir = tempDir('cli-columns');
    const narrow = await runCli(['run', '-n', '6', '-p', '2', '--sim-profile', 'cpu-tiny', '--output-dir', join(dir, 'a')], { env: { COLUMNS: '60' } });
    assert.equal(narrow.code, 0, narrow.stderr);
    for (const line of narrow.stdout.split('\n')) assert.ok(displayWidth(line) <= 60, `${displayWidth(line)}: ${line}`);
    assert.match(narrow.stdout, /^hidden to fit 60 columns: /m);
    assert.match(narrow.stdout, /│ metric +│/);
    const whole = await runCli(['run', '-n', '6', '-p', '2', '--sim-profile', 'cpu-tiny', '--output-dir', join(dir, 'b')], { env: { COLUMNS: '' } });
    assert.equal(whole.code, 0, whole.stderr);
    assert.doesNotMatch(whole.stdout, /hidden to fit/);
    assert.match(whole.stdout, /│ metric +│ count │/);
  });
});
