// Agentic trace loaders (issue #36): Weka, OTel GenAI spans (OTLP JSON and inference-perf's files) and Mooncake's
// tool-and-agent trace become trace sessions with sub-agent forks; equal hash ids give equal prompt text.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { tracePromptConversations } from '../../src/benchmark/trace-prompts.js';
import { loadDataset } from '../../src/conversation/load.js';
import type { Conversation } from '../../src/conversation/types.js';
import { traceStats } from '../../src/synth/trace-stats.js';
import { resolveTokenCounter, type TokenCounter } from '../../src/tokenizer/index.js';
import { FIXTURES, QWEN3_DIR } from '../helpers/tokenizers.js';
import { tempDir } from '../helpers/tmp.js';

const AGENTIC = join(FIXTURES, 'agentic');
const dir = tempDir('agentic-load');
const write = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const turns = (c: Conversation): string => c.trace!.turns.map((t) => `${t.atMs}:${t.inputLength}${t.toolResult === true ? 'T' : ''}`).join(' ');

describe('agentic trace loaders', () => {
  test('Weka: a trace a line is a session; its sub-agent forks after the request before it, on the trace clock', async () => {
    const loaded = await loadDataset(join(AGENTIC, 'weka-sample.jsonl'));
    assert.equal(loaded.format, 'weka');
    const [a, b] = loaded.conversations;
    assert.deepEqual([a!.id, b!.id], ['cc-1', 'cc-2']);
    // stop: tool_use and input_types: tool_result mark tool-result turns; t is seconds.
    assert.equal(turns(a!), '0:40 1000:70T 3200:100T');
    const child = a!.forks![0]!;
    assert.deepEqual(child.parent, { id: 'cc-1', at: 1 });
    // Its times were relative to the marker at 1.5 s.
    assert.equal(turns(child), '1600:50 2100:75T');
    assert.equal(child.trace!.context, 'self-contained');
    // The sub-agent shares the parent's first blocks; the other trace's equal ids are its own blocks.
    assert.deepEqual(child.trace!.turns[0]!.hashIds.slice(0, 2), a!.trace!.turns[1]!.hashIds.slice(0, 2));
    assert.notDeepEqual(b!.trace!.turns[0]!.hashIds, a!.trace!.turns[0]!.hashIds);
    const stats = traceStats(loaded.conversations);
    assert.deepEqual([stats.requests, stats.sessions, stats.agentic], [7, 2, { subAgents: 1, toolResults: 3 }]);
  });

  test('Weka: one pretty-printed trace file; missing hash ids are made up to the input length', async () => {
    const file = write('trace_0001.json', JSON.stringify({ id: 'x', models: ['m'], block_size: 8, requests: [{ t: 0, type: 'n', model: 'm', in: 30, out: 4, hash_ids: [5] }] }, null, 2));
    const [c] = (await loadDataset(file)).conversations;
    assert.equal(c!.trace!.turns[0]!.hashIds.length, 4);
    assert.equal(c!.trace!.blockSize, 8);
  });

  test('OTel: agents are sessions, a nested invoke_agent a sub-agent forked after the last call that ended before it', async () => {
    const loaded = await loadDataset(join(AGENTIC, 'otel-sample.json'));
    assert.equal(loaded.format, 'otel');
    const [conv, lone] = loaded.conversations;
    assert.equal(conv!.id, 'conv-1');
    assert.equal(turns(conv!), '0:120 800:170T 3100:260T');
    const child = conv!.forks![0]!;
    assert.equal(child.id, 'conv-1/researcher');
    assert.deepEqual(child.parent, { id: 'conv-1', at: 1 });
    assert.equal(turns(child), '1400:200 2000:230T');
    // Each call shares the previous prompt's whole 16-token blocks; the sub-agent the fork call's.
    const [c1, c2] = conv!.trace!.turns;
    assert.deepEqual(c2!.hashIds.slice(0, 7), c1!.hashIds.slice(0, 7));
    assert.notEqual(c2!.hashIds[7], c1!.hashIds[7]);
    assert.deepEqual(child.trace!.turns[0]!.hashIds.slice(0, 10), c2!.hashIds.slice(0, 10));
    assert.equal(lone!.id, '0af7651916cd43dd8448eb211c80319c');
    assert.equal(turns(lone!), '200:64');
    assert.deepEqual(traceStats(loaded.conversations).agentic, { subAgents: 1, toolResults: 3 });
    // --trace-window counts from the first model call, not from the epoch of the spans' nanoseconds.
    const windowed = await loadDataset(join(AGENTIC, 'otel-sample.json'), { trace: { window: { startSec: 0.1 } } });
    assert.deepEqual(windowed.conversations.map((c) => [c.id, c.trace!.turns[0]!.atMs]), [['0af7651916cd43dd8448eb211c80319c', 100]]);
  });

  test("OTel: OTLP JSON lines with a trace's spans across lines, and inference-perf's span files", async () => {
    const attr = (key: string, v: string | number) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } });
    const span = (spanId: string, parentSpanId: string, start: number, attributes: object[]) => ({ traceId: 't1', spanId, parentSpanId, name: 's', startTimeUnixNano: String(start * 1e6), endTimeUnixNano: String((start + 100) * 1e6), attributes });
    const line = (spans: object[]) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
    const chat = (id: string, parent: string, start: number, input: number) => span(id, parent, start, [attr('gen_ai.operation.name', 'chat'), attr('gen_ai.usage.input_tokens', input), attr('gen_ai.usage.output_tokens', 5)]);
    const jsonl = write('spans.jsonl', `${line([span('a', '', 0, [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'main')]), chat('c1', 'a', 10, 40)])}\n${line([chat('c2', 'a', 500, 60), span('b', 'a', 700, [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'sub')]), chat('c3', 'b', 800, 70)])}\n`);
    const [main] = (await loadDataset(jsonl)).conversations;
    assert.equal(main!.id, 't1/main');
    assert.equal(turns(main!), '0:40 490:60');
    assert.deepEqual(main!.forks!.map((f) => [f.id, f.parent!.at]), [['t1/main/sub', 1]]);
    // inference-perf's examples/otel/test_traces layout, with usage counts.
    const flat = { trace_id: 'paris', spans: [1, 2].map((k) => ({ trace_id: 'paris', span_id: `s${k}`, parent_span_id: null, name: 'chat gpt-4', start_time: `2026-02-25T10:00:0${k * 3}.000000`, end_time: `2026-02-25T10:00:0${k * 3 + 2}.500000`, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 20 * k, 'gen_ai.request.max_tokens': 50 } })) };
    const [paris] = (await loadDataset(write('paris.json', JSON.stringify(flat, null, 2)))).conversations;
    assert.equal(paris!.id, 'paris');
    assert.equal(turns(paris!), '0:20 3000:40');
    assert.equal(paris!.trace!.turns[0]!.outputLength, 50);
  });

  test("Mooncake tool-and-agent: chains of hash ids are sessions, a branch of a session's own context a sub-agent", async () => {
    const file = join(AGENTIC, 'mooncake-toolagent-sample.jsonl');
    // Its rows are Mooncake rows: detected as Mooncake, one session a row.
    assert.equal((await loadDataset(file)).format, 'mooncake');
    const loaded = await loadDataset(file, { trace: { format: 'mooncake-toolagent' } });
    assert.deepEqual(loaded.conversations.map((c) => c.id), ['session-1', 'session-2', 'session-8']);
    const s1 = loaded.conversations[0]!;
    assert.equal(turns(s1), '0:1100 1000:1700 2000:2800 4200:3100');
    assert.deepEqual(s1.forks!.map((f) => [f.id, f.parent!.at, turns(f)]), [['session-1/1', 2, '3000:2300 3600:2700']]);
    const windowed = await loadDataset(file, { trace: { format: 'mooncake-toolagent', window: { startSec: 0.4 } } });
    assert.deepEqual(windowed.conversations.map((c) => [c.id, c.trace!.turns[0]!.atMs]), [['session-2', 100], ['session-8', 4100]]);
  });

  describe('prompts', () => {
    let counter: TokenCounter;
    before(async () => {
      counter = await resolveTokenCounter({ tokenizer: QWEN3_DIR });
    });

    test('equal hash ids give equal prompt text, a sub-agent starting with its parent\'s blocks', async () => {
      const loaded = await loadDataset(join(AGENTIC, 'weka-sample.jsonl'));
      const prompts = new Map(tracePromptConversations(loaded.conversations, counter.tokenizer, 0).map((c) => [c.id, String(c.messages[0]!.content)]));
      const words = (id: string): string[] => prompts.get(id)!.split(' ').slice(1);
      const parent = words('cc-1/2');
      const child = words('cc-1::sa:a1/1');
      assert.equal(counter.tokenizer.count(prompts.get('cc-1::sa:a1/1')!), 50);
      assert.deepEqual(child.slice(0, 32), parent.slice(0, 32));
      assert.notDeepEqual(child.slice(32, 48), parent.slice(32, 48));
      // cc-2's ids 1, 2, 3 are not cc-1's.
      assert.notDeepEqual(words('cc-2/1').slice(0, 16), words('cc-1/1').slice(0, 16));
    });
  });
});
