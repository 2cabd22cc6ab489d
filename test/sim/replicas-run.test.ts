// `chatload run --sim-replicas N --sim-router KIND` (issue #31): the built-in simulator a run starts without --url runs
// the replicas and router, and --scrape-metrics reads the router's page (the replicas' sum).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

interface ServerMetrics {
  prefix_cache_queries: number;
  prefix_cache_hits: number;
}

async function serverMetrics(dir: string, router: string): Promise<ServerMetrics> {
  const out = join(dir, router);
  const args = ['run', '-n', '48', '-p', '4', '--sim-profile', 'cpu-tiny', '--sim-replicas', '4', '--sim-router', router, '--send-conversation-id', '--scrape-metrics', '--output-dir', out];
  const result = await runCli(args, { timeoutMs: 110_000 });
  assert.equal(result.code, 0, result.stderr);
  return (JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { server_metrics: ServerMetrics }).server_metrics;
}

describe('chatload run --sim-replicas', () => {
  test('round-robin over 4 built-in replicas reads fewer server-side prefix hits than sticky on the demo', { timeout: 240_000 }, async () => {
    const dir = tempDir('replicas-run');
    const roundRobin = await serverMetrics(dir, 'round-robin');
    const sticky = await serverMetrics(dir, 'sticky');
    assert.ok(sticky.prefix_cache_queries > 0);
    assert.ok(roundRobin.prefix_cache_hits / roundRobin.prefix_cache_queries < sticky.prefix_cache_hits / sticky.prefix_cache_queries, `round-robin ${JSON.stringify(roundRobin)}, sticky ${JSON.stringify(sticky)}`);
  });
});
