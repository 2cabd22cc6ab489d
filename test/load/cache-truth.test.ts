import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import type { RunPrefixCache } from '../../src/metrics/prefix-cache-tally.js';
import { startSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startLlamacppSlotsServer } from '../helpers/llamacpp-slots-server.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURES } from '../helpers/tokenizers.js';

// Issue #30's checks of the prefix-cache figure on each engine's semantics, over real loopback HTTP: llama.cpp's
// per-slot, token-granular cache with the server's own token ids (test/helpers/llamacpp-slots-server.ts, which
// reproduces a live llama-server), a warm server, and the simulator's vLLM-like cache under preemption and pressure.

/**
 * A generate_conversations config: `conversations` of `turns` user turns sharing a `common`-token system prompt (300),
 * each with its own `prefix` tokens after it.
 */
function sharedPrefixConfig(dir: string, conversations: number, turns: number, prefix = 100, common = 300): string {
  const path = join(dir, 'generate.json');
  writeFileSync(
    path,
    JSON.stringify({
      filetype: 'generate_conversations',
      num_conversations: conversations,
      text_files: [join(FIXTURES, 'corpus-voyage.txt')],
      print_stats: false,
      prompt_input: {
        num_turns: { distribution: 'constant', value: turns * 2 },
        common_prefix_num_tokens: { distribution: 'constant', value: common },
        prefix_num_tokens: { distribution: 'constant', value: prefix },
        num_tokens: { distribution: 'uniform', min: 40, max: 80 },
      },
      prompt_output: { num_tokens: { distribution: 'uniform', min: 20, max: 40 } },
    }),
  );
  return path;
}

function readResults(path: string): { tokenizer: string; token_counts_exact: boolean; prefix_cache: RunPrefixCache; warnings: string[] } {
  return JSON.parse(readFileSync(path, 'utf8')) as ReturnType<typeof readResults>;
}

describe('cache truth on llama.cpp semantics: per slot, token by token, the server\'s own token ids (issue #30)', () => {
  test('no --tokenizer: the server tokenizes; every record expects at least what was cached; efficiency within [0.95, 1.005], each turn within [0.90, 1.005]', { timeout: 120_000 }, async () => {
    const server = await startLlamacppSlotsServer({ slots: 4, delayMs: 1 });
    const dir = tempDir('cache-truth-llamacpp');
    try {
      const result = await runBenchmark({ url: server.url, model: 'qwen3-tiny', inputFile: sharedPrefixConfig(dir, 8, 6), numClients: 4, outputDir: dir, earlyStop: false });
      const doc = readResults(result.files.results);
      assert.equal(doc.tokenizer, 'server (llama.cpp /apply-template + /tokenize)');
      assert.equal(doc.token_counts_exact, true);
      const p = doc.prefix_cache;
      assert.equal(p.model.token_ids, 'server');
      assert.equal(p.model.block_size, 1, "llama.cpp's granularity: one token");
      assert.equal(p.model.semantics?.shared_from, 'end');
      assert.equal(p.model.semantics?.slots, 4, 'GET /props total_slots');
      const records = readRequestsJsonl(result.files.requests).filter((r) => r.status === 'ok');
      assert.equal(records.length, 48);
      for (const r of records) {
        assert.ok(r.expected_cached_tokens >= r.cached_tokens!, `${r.conversation_id} turn ${r.turn}: expected ${r.expected_cached_tokens} < cached ${r.cached_tokens}`);
        assert.equal(r.cache_model_input_tokens, r.input_num_tokens, 'the model counts the prompt in the server\'s units exactly');
      }
      const efficiency = p.totals.efficiency!;
      assert.ok(efficiency >= 0.95 && efficiency <= 1.005, `efficiency ${efficiency}`);
      for (const t of p.per_turn) {
        if (t.efficiency === null) continue;
        assert.ok(t.efficiency >= 0.9 && t.efficiency <= 1.005, `turn ${t.turn}: efficiency ${t.efficiency}`);
      }
      assert.equal(p.totals.warm_start_tokens, 0);
      const causes = Object.values(p.totals.misses.causes).reduce((a, b) => a + b, 0);
      assert.equal(causes, p.totals.misses.tokens, 'the causes add up to the missed tokens');
    } finally {
      await server.close();
    }
  });

  test("a chat template that drops reasoning from history (Qwen3's, answers thinking in their content): the server's ids already leave it out, and so does what the model expects", { timeout: 120_000 }, async () => {
    const server = await startLlamacppSlotsServer({ slots: 2, thinkWords: 20, delayMs: 0 });
    const dir = tempDir('cache-truth-thinking');
    try {
      const result = await runBenchmark({ url: server.url, model: 'qwen3-tiny', inputFile: sharedPrefixConfig(dir, 2, 3), numClients: 2, outputDir: dir, earlyStop: false });
      const records = readRequestsJsonl(result.files.requests).filter((r) => r.status === 'ok');
      assert.ok(server.requests.every((q) => q.content.startsWith('<think>')), 'every answer thought first');
      // The server's slot held each answer with its thinking; the next prompt (the template dropped it) matched only
      // up to the answer's start: the hit stops at the previous prompt, and the model expected no more.
      for (const r of records.filter((x) => x.turn > 1)) {
        const previous = records.find((x) => x.conversation_id === r.conversation_id && x.turn === r.turn - 1)!;
        assert.ok(r.cached_tokens! <= previous.input_num_tokens, `${r.conversation_id} turn ${r.turn}: cached ${r.cached_tokens} past the previous prompt (${previous.input_num_tokens})`);
        assert.ok(r.expected_cached_tokens >= r.cached_tokens!, `${r.conversation_id} turn ${r.turn}: expected ${r.expected_cached_tokens} < cached ${r.cached_tokens}`);
      }
      const t = result.prefixCache.totals;
      assert.ok(t.efficiency! >= 0.95 && t.efficiency! <= 1.005, `efficiency ${t.efficiency}: ${JSON.stringify(t.misses)}`);
    } finally {
      await server.close();
    }
  });

  test('answers that re-tokenize differently: the misses are history_resent, and the server\'s hits stop inside the previous answer', { timeout: 120_000 }, async () => {
    const server = await startLlamacppSlotsServer({ slots: 2, roundTrip: false, delayMs: 0 });
    const dir = tempDir('cache-truth-resent');
    try {
      const result = await runBenchmark({ url: server.url, model: 'qwen3-tiny', inputFile: sharedPrefixConfig(dir, 2, 4), numClients: 2, outputDir: dir, earlyStop: false });
      const p = readResults(result.files.results).prefix_cache;
      assert.ok(p.totals.misses.tokens > 0, 'the split words cost hits');
      assert.equal(p.totals.misses.causes.history_resent, p.totals.misses.tokens, JSON.stringify(p.totals.misses));
      // Each miss is where the split word is: one token of the server's answer ids that the text's encoding lacks.
      const records = readRequestsJsonl(result.files.requests).filter((r) => r.turn > 1);
      for (const r of records) assert.ok(r.expected_cached_tokens - r.cached_tokens! > 0 && r.miss_cause === 'history_resent', `${r.conversation_id} turn ${r.turn}: ${r.cached_tokens}/${r.expected_cached_tokens} ${r.miss_cause}`);
    } finally {
      await server.close();
    }
  });
});

describe("llama.cpp's slots: more clients than slots (docs/ENGINES.md)", () => {
  // Clients beyond the server's slots: requests wait for a slot, and a slot picked by prompt similarity that keeps half
  // its tokens is reused as it is, though the prompt cache holds the conversation's whole history. The one ideal cache
  // expects that history; the model of the slots says what the server reuses instead.
  for (const workers of [1, 2]) {
    test(`-p 6 on 2 slots${workers > 1 ? ', --workers 2' : ''}: the misses the slots cause are slot_choice, next to none unexplained, and they add up`, { timeout: 120_000 }, async () => {
      const server = await startLlamacppSlotsServer({ slots: 2, delayMs: 0 });
      const dir = tempDir('cache-truth-llamacpp-slots');
      try {
        const result = await runBenchmark({ url: server.url, model: 'qwen3-tiny', inputFile: sharedPrefixConfig(dir, 12, 4, 20), numClients: 6, workers, outputDir: dir, earlyStop: false });
        const p = readResults(result.files.results).prefix_cache;
        const records = readRequestsJsonl(result.files.requests).filter((r) => r.status === 'ok');
        assert.equal(records.length, 48);
        assert.ok(server.requests.some((q) => q.deferred), 'requests waited for a slot');
        const { causes, tokens } = p.totals.misses;
        assert.ok(causes.slot_choice > 0, JSON.stringify(p.totals.misses));
        // The model places arrivals and ends in the order the client saw them; on a loaded machine two near-
        // simultaneous ones may reach the server the other way round. Without the slots every one of them is unexplained.
        assert.ok(causes.unexplained <= tokens * 0.05, JSON.stringify(p.totals.misses));
        assert.equal(Object.values(causes).reduce((a, b) => a + b, 0), tokens);
        // A request that waited for a slot is looked up when it gets one: the one ideal cache then holds what the
        // requests that ended meanwhile left, which the server reused (a first turn, their shared prefix).
        const over = records.filter((r) => r.cached_tokens! > r.expected_cached_tokens!);
        // The four first turns that wait at the start were all over it when looked up at their send; the client's order
        // of near-simultaneous ends and arrivals leaves 0-2 over (seen with six of these runs at once).
        assert.ok(over.length <= 3, `served more than the one ideal cache held: ${JSON.stringify(over.map((r) => [r.conversation_id, r.turn, r.cached_tokens, r.expected_cached_tokens]))}`);
        // results.json says so: the requests and tokens beyond the model's figure (no warm start here).
        assert.equal(p.totals.beyond_expected_requests, over.length);
        assert.equal(p.totals.beyond_expected_tokens, over.reduce((sum, r) => sum + r.cached_tokens! - r.expected_cached_tokens, 0));
        // The server started empty: what a request that waited for its slot reused came from requests that ended while
        // it waited (the slots follow it), not from before the run.
        assert.equal(p.totals.warm_start_tokens, 0, JSON.stringify(records.filter((r) => (r.warm_start_tokens ?? 0) > 0).map((r) => [r.conversation_id, r.turn, r.cached_tokens, r.expected_cached_tokens])));
      } finally {
        await server.close();
      }
    });
  }
});

describe("llama.cpp's slots: requests queued in another order than sent (docs/ENGINES.md)", () => {
  // The first request sent is queued only once two others have ended (llama-server's HTTP threads queue tasks as they
  // finish reading them), and reuses the shared prefix they left in the slots. What the run had sent by its first token
  // explains that hit: not a warm start, which would take it out of the efficiency.
  for (const workers of [1, 2]) {
    test(`the first request queued last reuses the run's own prefix: no warm start${workers > 1 ? ', --workers 2' : ''}`, { timeout: 120_000 }, async () => {
      const server = await startLlamacppSlotsServer({ slots: 2, delayMs: 0, holdFirst: 2 });
      const dir = tempDir('cache-truth-llamacpp-held');
      try {
        const result = await runBenchmark({ url: server.url, model: 'qwen3-tiny', inputFile: sharedPrefixConfig(dir, 4, 2, 20), numClients: 4, workers, outputDir: dir, earlyStop: false });
        const records = readRequestsJsonl(result.files.requests).filter((r) => r.status === 'ok');
        assert.equal(records.length, 8);
        const held = server.requests.find((q) => q.index === 0)!;
        assert.ok(held.cached > 0, `the held request reused a prefix: ${JSON.stringify({ deferred: held.deferred, cached: held.cached })}`);
        const p = readResults(result.files.results).prefix_cache;
        assert.equal(p.totals.warm_start_tokens, 0, JSON.stringify(records.map((r) => [r.conversation_id, r.turn, r.cached_tokens, r.expected_cached_tokens, r.warm_start_tokens])));
      } finally {
        await server.close();
      }
    });
  }
});

describe("the simulator with llama.cpp's cache semantics (chatload serve --cache-semantics llamacpp, issue #30)", () => {
  test('the model reads the semantics from /metrics and runs them: token granular, shared at a request\'s end; every record within what it expected', { timeout: 120_000 }, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny', config: { cache_semantics: 'llamacpp' } });
    const dir = tempDir('cache-truth-sim-llamacpp');
    try {
      const result = await runBenchmark({ url: sim.url, inputFile: sharedPrefixConfig(dir, 8, 4), numClients: 4, outputDir: dir, earlyStop: false });
      const p = result.prefixCache;
      assert.equal(p.model.block_size, 1, "the simulator's cache_config_info block_size");
      assert.equal(p.model.semantics?.shared_from, 'end');
      assert.equal(p.model.capacity_tokens, 4096 * 16, 'the profile\'s KV capacity, in tokens');
      const records = readRequestsJsonl(result.files.requests).filter((r) => r.status === 'ok');
      for (const r of records) assert.ok(r.expected_cached_tokens >= r.cached_tokens!, `${r.conversation_id} turn ${r.turn}: expected ${r.expected_cached_tokens} < cached ${r.cached_tokens}`);
      const efficiency = p.totals.efficiency!;
      assert.ok(efficiency >= 0.95 && efficiency <= 1.005, `efficiency ${efficiency}: ${JSON.stringify(p.totals.misses)}`);
      assert.ok(p.totals.cached_tokens > 0);
    } finally {
      await sim.close();
    }
  });
});

describe('a warm llama.cpp server (issue #30)', () => {
  test('--reset-prefix-cache erases the slots but not the host-memory prompt cache: the second run warns, with what does empty it', { timeout: 120_000 }, async () => {
    const server = await startLlamacppSlotsServer({ slots: 2, slotSavePath: true, delayMs: 0 });
    const dir = tempDir('cache-truth-llamacpp-warm');
    try {
      // Four conversations on two slots: slots change hands, and what they held goes to the prompt cache.
      const inputFile = sharedPrefixConfig(dir, 4, 2);
      const run = (name: string) => runBenchmark({ url: server.url, model: 'qwen3-tiny', inputFile, numClients: 2, outputDir: join(dir, name), earlyStop: false, resetPrefixCache: true });
      const first = await run('first');
      assert.equal(first.prefixCache.totals.warm_start_tokens, 0);
      assert.deepEqual(server.slotTokens().map((t) => t.length > 0), [true, true], 'the first run left its prompts in the slots');
      assert.ok(server.promptCacheEntries().length > 0, 'slots taken over by other conversations were saved to the prompt cache');
      const second = await run('second');
      assert.ok(second.prefixCache.totals.warm_start_tokens > 0, 'the prompt cache still held the first run\'s prompts');
      const warning = second.warnings.find((w) => w.includes('was warm'));
      assert.match(warning ?? '', /llama\.cpp keeps its host-memory prompt cache \(--cache-ram\) through an erase; restart llama-server, or run it with --cache-ram 0/);
      assert.deepEqual(second.warnings.filter((w) => w.includes('could not empty')), [], 'the erase itself worked');
    } finally {
      await server.close();
    }
  });
});

describe('a warm server and preemption on the simulator (issue #30)', () => {
  test('the same dataset twice without a reset: the second run reports warm_start_tokens, warns once naming --reset-prefix-cache, and keeps them out of efficiency', { timeout: 120_000 }, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny' });
    const dir = tempDir('cache-truth-warm');
    try {
      const inputFile = sharedPrefixConfig(dir, 4, 3);
      const first = await runBenchmark({ url: sim.url, inputFile, numClients: 2, outputDir: join(dir, 'first'), earlyStop: false });
      assert.equal(first.prefixCache.totals.warm_start_tokens, 0, 'a cold server: nothing warm');
      const second = await runBenchmark({ url: sim.url, inputFile, numClients: 2, outputDir: join(dir, 'second'), earlyStop: false });
      const t = second.prefixCache.totals;
      assert.ok(t.warm_start_tokens > 0, 'turn 1 found its prompt cached from the first run');
      const turn1 = second.prefixCache.per_turn.find((row) => row.turn === 1)!;
      assert.ok(turn1.warm_start_tokens > 0 && turn1.warm_start_tokens <= turn1.cached_tokens);
      const warnings = second.warnings.filter((w) => w.includes('warm'));
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /--reset-prefix-cache/);
      assert.ok(t.efficiency !== null && t.efficiency <= 1.005, `efficiency ${t.efficiency}`);
    } finally {
      await sim.close();
    }
  });

  test('KV pressure (num_gpu_blocks 700, -p 8 -k 32): the misses hold, the causes add up, and at most 5% of them are unexplained', { timeout: 120_000 }, async () => {
    const sim = await startSimulator({ profile: 'cpu-tiny', config: { num_gpu_blocks: 700 } });
    const dir = tempDir('cache-truth-pressure');
    try {
      const result = await runBenchmark({ url: sim.url, inputFile: sharedPrefixConfig(dir, 40, 4, 600), numClients: 8, maxActiveConversations: 32, outputDir: dir, earlyStop: false });
      const t = result.prefixCache.totals;
      assert.equal(result.prefixCache.model.capacity_source, 'vllm:cache_config_info', 'the model runs the server\'s capacity');
      assert.ok(t.expected_hit_ratio! < t.expected_hit_ratio_infinite!, 'the capacity evicts');
      const sum = Object.values(t.misses.causes).reduce((a, b) => a + b, 0);
      assert.equal(sum, t.misses.tokens);
      assert.ok(t.misses.causes.unexplained <= 0.05 * Math.max(t.misses.tokens, 1), JSON.stringify(t.misses));
      assert.equal(t.warm_start_tokens, 0, 'a cold server');
      // The capacity model follows the server's evictions (measured: 36.7% cached against 36.6% expected, 79% with no eviction).
      assert.ok(t.efficiency! >= 0.9 && t.efficiency! <= 1.1, `efficiency ${t.efficiency}`);
    } finally {
      await sim.close();
    }
  });

  test('preemption (num_gpu_blocks 400, -p 8): the server\'s hit ratio is at most the expected one + 0.5 points', { timeout: 120_000 }, async () => {
    // No prefix shared across conversations: what is cached is each one's own history, whatever the batches were
    // (the model reads batches from first-token times, which a loaded machine can blur).
    const sim = await startSimulator({ profile: 'cpu-tiny', config: { num_gpu_blocks: 400 } });
    const dir = tempDir('cache-truth-preempt');
    try {
      const result = await runBenchmark({ url: sim.url, inputFile: sharedPrefixConfig(dir, 16, 3, 1500, 0), numClients: 8, outputDir: dir, scrapeMetrics: true, earlyStop: false });
      const metrics = await (await fetch(`${sim.url}/metrics`)).text();
      const preemptions = Number(/^vllm:num_preemptions_total\{[^}]*\} (\S+)/m.exec(metrics)?.[1] ?? 0);
      assert.ok(preemptions > 0, 'the run preempted');
      const t = result.prefixCache.totals;
      assert.ok(t.hit_ratio! <= t.expected_hit_ratio! + 0.005, `hit ratio ${t.hit_ratio} against expected ${t.expected_hit_ratio}`);
    } finally {
      await sim.close();
    }
  });
});
