// The `gpu` line of chatload run's summary (issue #32, part 5), through the CLI: the simulator and a 2-GPU
// dcgm-exporter page (test/helpers/dcgm-exporter-server.ts) as two --scrape-metrics, over loopback. The exporter's
// Hostname label carries a terminal escape sequence and its page nonsense values: the warning that names a GPU shows
// the label escaped, never raw.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startSimulator } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';
import { startDcgmExporter } from '../helpers/dcgm-exporter-server.js';
import { tempDir } from '../helpers/tmp.js';

describe('chatload run with a dcgm-exporter page', { timeout: 180_000 }, () => {
  test('prints the gpu line after throughput, and a hostile Hostname only escaped', async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny' });
    const exporter = await startDcgmExporter({ powerW: 300, nonsense: true, hostname: 'node\u001b[2J\u001b]0;pwned\u0007' });
    try {
      const dir = tempDir('gpu-cli');
      const args = ['run', '--url', sim.url, '-p', '2', '--duration', '1.2', '--output-dir', dir, '--scrape-metrics', `${sim.url}/metrics`, '--scrape-metrics', exporter.url, '--scrape-interval-sec', '0.2'];
      const result = await runCli(args, { timeoutMs: 150_000 });
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.split('\n');
      const throughput = lines.findIndex((l) => l.trimStart().startsWith('throughput'));
      assert.match(lines[throughput + 1] ?? '', /^ {2}gpu +2 GPUs: energy [\d.]+ J \(energy counter\) over [\d.]+ s \| mean power [\d.]+ W \| mean util [\d.]+% \| [\d.e+-]+ output tokens\/J$/);
      const output = result.stdout + result.stderr;
      assert.ok(!output.includes('\u001b'), 'no escape character from the page reaches the terminal');
      assert.match(result.stderr, /out of range, skipped: DCGM_FI_DEV_POWER_USAGE -12\.000000 \(gpu node\\x1b\[2J\\x1b\]0;pwned\\x07\/1\)/);
    } finally {
      await exporter.close();
      await sim.close();
    }
  });
});
