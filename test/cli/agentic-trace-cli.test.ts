// `chatload trace stats` on the agentic traces (issue #36): sessions, requests (sub-agents' too), sub-agents,
// tool-result turns and the theoretical hit ratio, worked by hand from the fixtures (test/fixtures/agentic/README.md).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { FIXTURES } from '../helpers/tokenizers.js';

const AGENTIC = join(FIXTURES, 'agentic');

describe('chatload trace stats on agentic traces', { timeout: 60_000 }, () => {
  test('OTel spans (detected): 6 requests in 2 sessions, a sub-agent, 3 tool-result turns', async () => {
    const r = await runCli(['trace', 'stats', join(AGENTIC, 'otel-sample.json')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /otel trace, 6 requests in 2 sessions over 3\.1 s .* 16 tokens a block/);
    assert.match(r.stdout, /agentic\s+1 sub-agent \(forks\), 3 tool-result turns/);
    // Each call reuses the whole blocks of the prompt before it (its agent's, or the fork call's): 7 blocks of call 1
    // in call 2, 10 of call 2 in call 3 and in the sub-agent's first, 12 of that in its second: 624 of 1044 tokens.
    assert.match(r.stdout, /theoretical hit ratio 59\.77% \(624 of 1044 input tokens/);
  });

  test('Mooncake tool-and-agent (named) and Weka, as JSON', async () => {
    const m = await runCli(['trace', 'stats', join(AGENTIC, 'mooncake-toolagent-sample.jsonl'), '--input-format', 'mooncake-toolagent', '--json']);
    assert.equal(m.code, 0, m.stderr);
    const ms = JSON.parse(m.stdout) as Record<string, unknown> & { infinite: { hit_tokens: number; input_tokens: number } };
    assert.deepEqual([ms.format, ms.requests, ms.sessions, ms.sub_agents, ms.tool_results], ['mooncake-toolagent', 8, 3, 1, 0]);
    // Full 512-token blocks seen before: 2 + 3 + 4 + 4 + 5 + 2 blocks.
    assert.deepEqual([ms.infinite.hit_tokens, ms.infinite.input_tokens], [10240, 16100]);
    const w = await runCli(['trace', 'stats', join(AGENTIC, 'weka-sample.jsonl'), '--json']);
    assert.equal(w.code, 0, w.stderr);
    const ws = JSON.parse(w.stdout) as Record<string, unknown>;
    assert.deepEqual([ws.format, ws.requests, ws.sessions, ws.sub_agents, ws.tool_results, ws.block_size], ['weka', 7, 2, 1, 3, 16]);
  });
});
