import type { RunPrefixCache } from '../../src/metrics/prefix-cache-tally.js';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { mergeRuns } from '../../src/benchmark/merge.js';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { Command } from 'commander';
import { addRunOptions, runOptionsFromCommand } from '../../src/cli/run-options.js';
import { RequestBudget, shareOf } from '../../src/load/partition.js';
import { summarizePerConversation, type ConversationSummary } from '../../src/metrics/per-conversation.js';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import { summarize } from '../../src/metrics/summary.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startSimulatorWorker, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticConversations, writeDataset, writeSyntheticDataset } from '../helpers/datasets.js';
import { startFixedTimingServer, type FixedTimingServer } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';
import { assertAgainstReference } from '../helpers/summary-reference.js';

describe('partition arithmetic', () => {
  test('shares add up to the whole with no remainder lost', () => {
    for (const [total, count] of [[10, 3], [7, 7], [3, 5], [1000, 6]] as const) {
      const shares = Array.from({ length: count }, (_, i) => shareOf(total, i, count));
      assert.equal(shares.reduce((a, b) => a + b), total);
      assert.ok(Math.max(...shares) - Math.min(...shares) <= 1);
    }
  });

  test('a shared budget is exact even when threads race', async () => {
    const budget = new RequestBudget(300_000);
    const { Worker } = await import('node:worker_threads');
    // Each thread takes from the same buffer through RequestBudget itself (the compiled module this test imports, as
    // `npm test` runs it), as worker threads do in a run. They start together (a barrier), so their takes overlap: a
    // budget that decremented without its compare-and-swap gave more than the limit here (seen failing).
    const module = new URL('../../src/load/partition.js', import.meta.url).href;
    const barrier = new Int32Array(new SharedArrayBuffer(8)); // [threads ready, go]
    const threads = 3;
    const code = `const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.module).then(({ RequestBudget }) => {
        const budget = new RequestBudget(undefined, workerData.buffer);
        const barrier = new Int32Array(workerData.barrier);
        Atomics.add(barrier, 0, 1);
        Atomics.wait(barrier, 1, 0);
        let n = 0;
        while (budget.take()) n++;
        parentPort.postMessage(n);
      });`;
    const counts = Promise.all(
      Array.from(
        { length: threads },
        () =>
          new Promise<number>((resolve, reject) => {
            const w = new Worker(code, { eval: true, workerData: { module, buffer: budget.buffer, barrier: barrier.buffer } });
            w.once('message', (n: number) => void w.terminate().then(() => resolve(n)));
            w.once('error', reject);
          }),
      ),
    );
    // Bounded: the threads load the module in a few ms.
    for (let i = 0; i < 1000 && Atomics.load(barrier, 0) < threads; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(Atomics.load(barrier, 0), threads, 'every thread is ready');
    Atomics.store(barrier, 1, 1);
    Atomics.notify(barrier, 1);
    const taken = (await counts).reduce((a, b) => a + b);
    assert.equal(taken, 300_000);
    assert.equal(budget.taken, 300_000);
    assert.ok(budget.spent);
    assert.equal(budget.take(), false);
  });

  test('a Kubernetes Indexed Job sets the shard from its environment', () => {
    const shard = (args: string[], env: NodeJS.ProcessEnv): unknown => runOptionsFromCommand(addRunOptions(new Command()).parse(args, { from: 'user' }), env).input.shard;
    assert.equal(shard([], { JOB_COMPLETION_INDEX: '2', CHATLOAD_SHARD_COUNT: '4' }), '2/4');
    assert.equal(shard([], { JOB_COMPLETION_INDEX: '2' }), undefined);
    assert.equal(shard(['--shard', '1/3'], { JOB_COMPLETION_INDEX: '2', CHATLOAD_SHARD_COUNT: '4' }), '1/3');
  });
});

describe('worker threads and shards against the simulator', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulatorWorker({ profile: 'cpu-tiny' });
  });
  after(async () => {
    await sim.close();
  });

  test('--workers 2 keeps -n exact, numbers clients across workers, and accounts for every conversation', { timeout: 60_000 }, async () => {
    const dir = tempDir('workers');
    // The observer (the live view's feed) hears every worker's sends too, so its in-flight count is known.
    let sends = 0;
    let seen = 0;
    const result = await runBenchmark(
      { url: sim.url, inputFile: writeSyntheticDataset(dir, 20, 4), numClients: 4, maxNumRequests: 40, workers: 2, outputDir: dir },
      { observer: { onSend: () => void (sends += 1), onRecord: () => void (seen += 1) } },
    );
    const records = readRequestsJsonl(result.files.requests);
    assert.equal(records.length, 40);
    assert.equal(seen, 40);
    assert.equal(sends, 40, 'one send per request, forwarded from the workers');
    assert.equal(result.summary.completed, 40);
    assert.deepEqual([...new Set(records.map((r) => r.client_id))].sort(), [0, 1, 2, 3]);
    // Worker 0 owns the even conversations, worker 1 the odd ones; clients 0-1 are worker 0's.
    for (const r of records) assert.equal(r.conversation_index % 2, r.client_id < 2 ? 0 : 1);
    const c = result.load.conversations;
    assert.equal(c.completed + c.failed + c.unfinished + c.not_started, 20);
    assert.equal(result.load.stopReason, 'max_requests');
    assert.match(result.load.loadModel, /2 worker threads/);
    assert.ok(records.every((r) => r.sent_at_ms >= 0), 'every part times its records from the common start');
    // Each part aggregated its own records; the merged aggregate summarizes as the records written would (computed
    // here, apart from chatload's summary code).
    assertAgainstReference(result.summary, records, undefined, 'merged workers');
    assert.deepEqual(result.summary, summarize(records));
    assert.deepEqual(result.perTurn, summarizePerTurn(records));
    const doc = JSON.parse(readFileSync(result.files.results, 'utf8')) as { per_conversation: ConversationSummary[] };
    const byId = (list: ConversationSummary[]) => [...list].sort((a, b) => a.conversation_id.localeCompare(b.conversation_id));
    assert.deepEqual(byId(doc.per_conversation), byId(summarizePerConversation(records)));
  });

  test('a worker that runs out of work first does not stop the others (no early stop)', { timeout: 60_000 }, async () => {
    const dir = tempDir('workers-uneven');
    // Worker 0 owns the even conversations (1 turn), worker 1 the odd ones (5 turns): worker 0 is done long before.
    const path = writeDataset(dir, syntheticConversations({ count: 8, userTurns: (i) => (i % 2 === 0 ? 1 : 5) }));
    const result = await runBenchmark({ url: sim.url, inputFile: path, numClients: 2, earlyStop: false, workers: 2, outputDir: dir });
    assert.deepEqual(result.load.conversations, { total: 8, completed: 8, failed: 0, dropped: 0, unfinished: 0, not_started: 0 });
    assert.equal(result.summary.completed, 4 + 4 * 5);
  });

  test('warmup and early stop keep their meaning across workers', { timeout: 60_000 }, async () => {
    const dir = tempDir('workers-warmup');
    const result = await runBenchmark({ url: sim.url, inputFile: writeSyntheticDataset(dir, 6, 3), numClients: 2, warmupStep: true, earlyStop: false, workers: 2, outputDir: dir });
    const records = readRequestsJsonl(result.files.requests);
    assert.equal(records.filter((r) => r.warmup).length, 6);
    assert.equal(result.summary.completed, 12);
    assert.deepEqual(result.load.conversations, { total: 6, completed: 6, failed: 0, dropped: 0, unfinished: 0, not_started: 0 });
  });

  test('two shards and a merge give the request count of one run; identical records give identical percentiles', { timeout: 90_000 }, async () => {
    const dir = tempDir('shards');
    const inputFile = writeSyntheticDataset(dir, 12, 3);
    const startAt = new Date(Date.now() + 400).toISOString();
    const shards = await Promise.all(
      ['0/2', '1/2'].map((shard, i) => runBenchmark({ url: sim.url, inputFile, numClients: 4, maxNumRequests: 30, shard, startAt, outputDir: join(dir, `shard-${i}`) })),
    );
    assert.deepEqual(shards.map((s) => s.summary.completed), [15, 15], 'each shard runs its exact share of -n');
    for (const [i, s] of shards.entries()) {
      const records = readRequestsJsonl(s.files.requests);
      assert.ok(records.every((r) => r.conversation_index % 2 === i), 'shard I owns conversations i % N == I');
      assert.ok(records.every((r) => r.start_time_ms >= Date.parse(startAt) - 1), 'nothing is sent before --start-at');
    }
    // As shards that counted in the server's own token ids would say (these counted approximately): the merge reads it.
    for (const s of shards) {
      const doc = JSON.parse(readFileSync(s.files.results, 'utf8')) as { token_counts_exact: boolean };
      assert.equal(doc.token_counts_exact, false);
      writeFileSync(s.files.results, JSON.stringify({ ...doc, token_counts_exact: true }));
    }
    const merged = await mergeRuns([join(dir, 'shard-0'), join(dir, 'shard-1')], join(dir, 'merged'));
    assert.equal(merged.records, 30);
    const results = JSON.parse(readFileSync(merged.files.results, 'utf8')) as { completed: number; conversations: { total: number }; prefix_cache: RunPrefixCache };
    assert.equal(results.completed, 30);
    assert.equal(results.conversations.total, 12);
    // Each shard's process had its own expected-cache index (issue #31): the merged figure says so, and is their sum.
    assert.deepEqual(shards.map((s) => s.prefixCache.model.scope), ['global', 'global']);
    assert.equal(results.prefix_cache.model.scope, 'per-shard');
    assert.match(results.prefix_cache.model.scope_note!, /2 runs merged, each with its own expected-cache index/);
    assert.equal(results.prefix_cache.totals.expected_cached_tokens, shards[0]!.prefixCache.totals.expected_cached_tokens + shards[1]!.prefixCache.totals.expected_cached_tokens);
    assert.ok(!merged.warnings.some((w) => /cache semantics|different engines/.test(w)), 'both shards ran one semantics, against one engine');
    // The merge states the runs' engine and whether their counts were exact, as a run does: a merge of merges reads
    // them back (a merge without token_counts_exact read as approximate, and its prefix_cache could turn not comparable).
    const shardDoc = JSON.parse(readFileSync(shards[0]!.files.results, 'utf8')) as { engine: { name: string } };
    const facts = results as unknown as { engine: { name: string }; token_counts_exact: boolean };
    assert.deepEqual(facts.engine, shardDoc.engine);
    assert.equal(facts.engine.name, 'chatload-sim');
    assert.equal(facts.token_counts_exact, true);
    const again = await mergeRuns([join(dir, 'merged')], join(dir, 'merged-again'));
    const againDoc = JSON.parse(readFileSync(again.files.results, 'utf8')) as { engine: { name: string }; token_counts_exact: boolean; prefix_cache: RunPrefixCache };
    assert.deepEqual([againDoc.engine, againDoc.token_counts_exact], [facts.engine, true]);
    assert.equal(againDoc.prefix_cache.comparable, true);
    // A shard written by a chatload that took vLLM's batch-mates not to share (schema 1.1.0 said shared_from prefill):
    // the merge says the models differ.
    const older = join(dir, 'shard-1', 'results.json');
    const doc1 = JSON.parse(readFileSync(older, 'utf8')) as { prefix_cache: RunPrefixCache; engine: { name: string } };
    doc1.prefix_cache.model.semantics!.shared_from = 'prefill';
    doc1.engine.name = 'vllm';
    writeFileSync(older, JSON.stringify(doc1));
    const mixed = await mergeRuns([join(dir, 'shard-0'), join(dir, 'shard-1')], join(dir, 'merged-mixed'));
    const said = mixed.warnings.find((w) => /cache semantics/.test(w));
    assert.ok(said !== undefined && said.includes('shared_from schedule') && said.includes('shared_from prefill'), `${mixed.warnings.join(' | ')}`);
    const engines = mixed.warnings.find((w) => /different engines/.test(w));
    assert.ok(engines !== undefined && /: chatload-sim [^;]*; .*: vllm /.test(engines), `${mixed.warnings.join(' | ')}`);

    const single = await runBenchmark({ url: sim.url, inputFile, numClients: 4, maxNumRequests: 30, outputDir: join(dir, 'single') });
    assert.equal(single.summary.completed, merged.records, 'N shards + merge = one run, in request count');

    // Split one run's records into two fake shards: the merge must reproduce its percentiles exactly.
    const records = readRequestsJsonl(single.files.requests);
    for (const [i, part] of [records.filter((_, k) => k % 2 === 0), records.filter((_, k) => k % 2 === 1)].entries()) {
      mkdirSync(join(dir, `split-${i}`));
      writeFileSync(join(dir, `split-${i}`, 'requests.jsonl'), part.map((r) => JSON.stringify(r)).join('\n') + '\n');
    }
    const remerged = await mergeRuns([join(dir, 'split-0'), join(dir, 'split-1')], join(dir, 'remerged'));
    const doc = JSON.parse(readFileSync(remerged.files.results, 'utf8')) as { summary: ReturnType<typeof summarize> };
    const original = summarize(records);
    for (const key of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms', 'input_num_tokens', 'cached_tokens'] as const) {
      assert.deepEqual(doc.summary.metrics[key], original.metrics[key], key);
    }
    // Read back from results.json, which keeps times to the microsecond.
    assertAgainstReference(doc.summary, records, undefined, 'remerged shards', 1e-3);
  });
});

describe('worker threads running open-loop sessions', () => {
  let server: FixedTimingServer;
  before(async () => {
    server = await startFixedTimingServer({ ttftMs: 100, itlMs: 50, tokens: 10 });
  });
  after(async () => {
    await server.close();
  });

  test('each worker sizes its connection pool for the sessions it may have in flight, not for -p', { timeout: 60_000 }, async () => {
    // 60 one-turn sessions at 40/s, each answer taking ~0.55 s: about 20 are in flight at once, ~10 per worker. A
    // worker whose pool had -p (1) connections would send them one at a time over one socket each.
    const dir = tempDir('workers-open-loop');
    const result = await runBenchmark({ url: server.url, inputFile: writeSyntheticDataset(dir, 60, 1), sessionRate: 40, workers: 2, seed: 1, outputDir: dir });
    assert.equal(result.summary.completed, 60);
    const chats = server.requests.filter((r) => r.url.endsWith('/chat/completions'));
    assert.equal(chats.length, 60);
    const ports = new Set(chats.map((r) => r.remotePort));
    assert.ok(ports.size >= 10, `the server saw ${ports.size} client connections, expected one per concurrent session (>= 10)`);
  });
});
