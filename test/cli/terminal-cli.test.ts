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

describe('sweep --help', () => {
  test("names the sweep's own options and points to run --help instead of listing run's; run's options still parse", { timeout: 30_000 }, async () => {
    const help = await runCli(['sweep', '--help']);
    assert.equal(help.code, 0, help.stderr);
    const lines = help.stdout.split('\n');
    assert.ok(lines.length < 60, `${lines.length} lines`);
    for (const flag of ['--concurrency', '--session-rates', '--search', '--min-rate', '--max-rate', '--slo-share', '--cache-pressure', '--repeat']) assert.match(help.stdout, new RegExp(`^  ${flag} `, 'm'), flag);
    for (const flag of ['--num-clients', '--url', '--goodput', '--input-file']) assert.doesNotMatch(help.stdout, new RegExp(`^  (-\\w, )?${flag}`, 'm'), flag);
    assert.match(help.stdout, /Every `chatload run` option applies to each point/);
    assert.match(help.stdout, /see `chatload run --help`/);
    // Unlisted, still accepted: the sweep's own check speaks, not commander's "unknown option".
    const parsed = await runCli(['sweep', '--num-clients', '2', '--url', 'http://127.0.0.1:9', '--goodput', 'ttft:500']);
    assert.equal(parsed.code, 2);
    assert.equal(parsed.stderr.trim(), 'chatload: sweep: give exactly one of --concurrency LIST, --session-rates LIST, --think-time LIST or --search');
  });
});

describe('sweep --search at --max-rate', () => {
  test('generous SLOs and a low --max-rate: the answer says the limit is higher, to raise --max-rate, and shows the SLOs', { timeout: 90_000 }, async () => {
    const dir = join(tempDir('cli-search-max'), 'out');
    const result = await runCli(['sweep', '--search', '--min-rate', '0.5', '--max-rate', '1', '--goodput', 'ttft:60000', 'e2el:600000', '-n', '4', '--sim-profile', 'cpu-tiny', '--output-dir', dir], { timeoutMs: 80_000 });
    assert.equal(result.code, 0, result.stderr);
    const last = result.stdout.trimEnd().split('\n').at(-1)!;
    assert.equal(
      last,
      "the highest rate tried, --max-rate 1/s, met the SLOs (ttft <= 60000 ms, e2el <= 600000 ms for at least 90% of requests): the server's limit is higher; raise --max-rate to find it",
    );
    assert.match(result.stdout, /^session-rate 1: .*goodput 100(\.0)?%$/m, 'the --max-rate point ran and met them');
  });

  test('the other answers name the SLOs too', async () => {
    const { searchLine } = await import('../../src/cli/sweep.js');
    const plan = { kind: 'search', minRate: 0.5, maxRate: 8, steps: 5, targetShare: 0.95 } as const;
    const slos = { ttft_ms: 500 };
    assert.equal(searchLine(plan, 2.75, slos), 'highest session rate that met the SLOs (ttft <= 500 ms for at least 95% of requests): 2.75/s\n');
    assert.equal(searchLine(plan, null, slos), 'no rate met the SLOs (ttft <= 500 ms for at least 95% of requests), not even --min-rate 0.5/s: lower --min-rate\n');
    assert.match(searchLine(plan, 8, slos), /--max-rate 8\/s, met the SLOs \(ttft <= 500 ms .*raise --max-rate/);
  });
});
