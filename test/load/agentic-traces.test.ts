// Agentic traces (issue #36): Weka, OTel GenAI spans and Mooncake's tool-and-agent trace replayed against the
// simulator over loopback. Each fixture (test/fixtures/agentic/README.md) has sessions, tool-result turns and a
// sub-agent fork: every request completes, the sub-agent's records name their parent, it runs after the parent's
// fork turn and before the parent's next one, and its first prompt shares the parent's blocks in the server's cache.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { loadDataset } from '../../src/conversation/load.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { traceStats } from '../../src/synth/trace-stats.js';
import { FIXTURES, QWEN3_DIR } from '../helpers/tokenizers.js';
import { tempDir } from '../helpers/tmp.js';

const AGENTIC = join(FIXTURES, 'agentic');

interface Case {
  file: string;
  inputFormat?: 'weka' | 'otel' | 'mooncake-toolagent';
  requests: number;
  parent: string;
  child: string;
  /** The parent's turn (1-based) after whose answer the sub-agent starts. */
  forkTurn: number;
  /** Tokens of the sub-agent's first prompt in blocks it shares with the parent's fork-turn prompt. */
  sharedTokens: number;
}

const CASES: Case[] = [
  { file: 'weka-sample.jsonl', requests: 7, parent: 'cc-1', child: 'cc-1::sa:a1', forkTurn: 2, sharedTokens: 32 },
  { file: 'otel-sample.json', requests: 6, parent: 'conv-1', child: 'conv-1/researcher', forkTurn: 2, sharedTokens: 160 },
  { file: 'mooncake-toolagent-sample.jsonl', inputFormat: 'mooncake-toolagent', requests: 8, parent: 'session-1', child: 'session-1/1', forkTurn: 3, sharedTokens: 2048 },
];

const byTurn = (records: RequestRecord[], id: string): RequestRecord[] => records.filter((r) => r.conversation_id === id).sort((a, b) => a.turn - b.turn);

describe('agentic trace replay against the simulator', () => {
  let sim: RunningSimulator;
  before(async () => {
    // 16-token KV blocks: each trace block (16, 16 and 512 tokens) is whole blocks of the simulator's.
    sim = await startSimulator({ profile: 'cpu-tiny', tokenizer: QWEN3_DIR, config: { block_size: 16 } });
  });
  after(async () => {
    await sim.close();
  });

  for (const c of CASES) {
    test(`${c.file}: every request completes, the sub-agent forks from its parent and shares its prefix`, { timeout: 60_000 }, async () => {
      const dir = tempDir('agentic-trace');
      const inputFile = join(AGENTIC, c.file);
      const result = await runBenchmark({ url: sim.url, inputFile, inputFormat: c.inputFormat, tokenizer: QWEN3_DIR, traceSpeed: 4, resetPrefixCache: true, outputDir: dir });
      assert.match(result.load.loadModel, /^fixed-schedule/);
      const records = readRequestsJsonl(result.files.requests);
      assert.equal(records.length, c.requests);
      assert.ok(records.every((r) => r.status === 'ok'), records.map((r) => r.error).join('; '));
      const parent = byTurn(records, c.parent);
      const child = byTurn(records, c.child);
      assert.ok(child.length > 0 && child.every((r) => r.parent_conversation_id === c.parent));
      assert.ok(parent.every((r) => (r.parent_conversation_id ?? null) === null));
      // The sub-agent starts after the fork turn's answer; the parent's next turn waits for the sub-agent's end.
      assert.ok(child[0]!.sent_at_ms >= parent[c.forkTurn - 1]!.done_at_ms);
      assert.ok(parent[c.forkTurn]!.sent_at_ms >= child[child.length - 1]!.done_at_ms);
      // Its first prompt is the parent's blocks, then its own: the theoretical hit, and the simulator's cache hit.
      assert.equal(child[0]!.expected_cached_tokens, c.sharedTokens);
      assert.ok(child[0]!.cached_tokens! >= c.sharedTokens, `cached ${child[0]!.cached_tokens} of ${c.sharedTokens} shared`);
      // The run's theoretical hits are trace stats' (sub-agents' requests counted).
      const loaded = await loadDataset(inputFile, { trace: { format: c.inputFormat } });
      const stats = traceStats(loaded.conversations);
      assert.equal(stats.requests, c.requests);
      assert.equal(records.reduce((n, r) => n + r.expected_cached_tokens, 0), stats.infinite.hitTokens);
    });
  }
});
