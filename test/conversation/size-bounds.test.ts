// Size bounds (issue #16): generation configs and loaded datasets are bounded, with a one-line error naming the file,
// the field and the bound, before any large allocation (num_tokens 1e12 crashed V8; 1e8 ran for minutes; -50 passed).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadDataset, SIZE_BOUNDS, type SizeBounds } from '../../src/conversation/index.js';
import { ConfigError, DatasetError } from '../../src/errors/index.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('bounds');
let n = 0;
function file(content: string, ext = 'json'): string {
  const path = join(dir, `b${n++}.${ext}`);
  writeFileSync(path, content);
  return path;
}

const constant = (value: number): Record<string, unknown> => ({ distribution: 'constant', value });
function gen(patch: { conversations?: number; turns?: unknown; tokens?: unknown; output?: unknown; extra?: Record<string, unknown> } = {}): string {
  return JSON.stringify({
    filetype: 'generate_conversations',
    num_conversations: patch.conversations ?? 2,
    prompt_input: { num_turns: patch.turns ?? constant(2), num_tokens: patch.tokens ?? constant(30) },
    prompt_output: { num_tokens: patch.output ?? constant(5) },
    ...patch.extra,
  });
}

/** The one-line message the load fails with, after checking it is an input error (exit code 2) and fast. */
async function refusal(path: string, bounds?: Partial<SizeBounds>): Promise<string> {
  try {
    await loadDataset(path, { bounds });
  } catch (error) {
    assert.ok(error instanceof ConfigError || error instanceof DatasetError, `unexpected ${(error as Error).stack}`);
    assert.equal(error.exitCode, 2);
    assert.ok(!/[\r\n]/.test(error.message), error.message);
    assert.ok(error.message.startsWith(path), `names the file: ${error.message}`);
    return error.message;
  }
  assert.fail('expected the load to fail');
}

describe('generation configs are bounded', () => {
  test('a size distribution that can go over the per-message bound, or below zero, is refused as it is read', async () => {
    const cases: [string, RegExp][] = [
      [gen({ tokens: constant(1e12) }), /prompt_input\.num_tokens: constant\(1000000000000\) goes over the bound of 2,000,000 tokens per message$/],
      [gen({ tokens: constant(1e8) }), /prompt_input\.num_tokens: constant\(100000000\) goes over the bound of 2,000,000 tokens per message$/],
      [gen({ tokens: constant(-50) }), /prompt_input\.num_tokens: constant\(-50\) can be negative; expected sizes >= 0$/],
      [gen({ output: { distribution: 'uniform', min: 1, max: 3e6 } }), /prompt_output\.num_tokens: uniform\(1, 3000000\) goes over the bound/],
      [gen({ tokens: { distribution: 'lognormal', average: 100, max: 5e6 } }), /prompt_input\.num_tokens: lognormal\(average=100, median_ratio=0\.85, max=5000000\) goes over/],
      [gen({ turns: { distribution: 'uniform', min: 2, max: 1e6 } }), /prompt_input\.num_turns: uniform\(2, 1000000\) goes over the bound of 100,000 messages per conversation$/],
      [gen({ turns: constant(-4) }), /prompt_input\.num_turns: constant\(-4\) can be negative/],
      [gen({ conversations: 2e6 }), /num_conversations: 2,000,000 is over the bound of 1,000,000 generated conversations$/],
      [gen({ extra: { system_prompt: { num_tokens: constant(1e9) } } }), /system_prompt\.num_tokens: constant\(1000000000\) goes over/],
    ];
    for (const [text, pattern] of cases) assert.match(await refusal(file(text)), pattern);
  });

  test('an unbounded distribution is checked sample by sample, before any text is made', async () => {
    // lognormal(mean=20, sigma=0) always gives e^20 ≈ 485 million; poisson with a huge alpha used to loop for ever.
    assert.match(
      await refusal(file(gen({ tokens: { distribution: 'lognormal', mean: 20, sigma: 0 } }))),
      /prompt_input\.num_tokens: a sample of 485,165,195 tokens from lognormal\(mean=20, sigma=0\) is over the bound of 2,000,000 tokens per message; give the distribution a "max"$/,
    );
    assert.match(await refusal(file(gen({ output: { distribution: 'poisson', alpha: 1e12 } }))), /prompt_output\.num_tokens: a sample of [\d,]+ tokens from poisson/);
    assert.match(await refusal(file(gen({ turns: { distribution: 'zipf', alpha: 1.01 } })), { generatedTurns: 10 }), /num_turns: a sample of [\d,]+ messages from zipf\(alpha=1\.01\) is over the bound of 10 per conversation/);
  });

  test('the whole dataset is bounded in tokens: 1,000 conversations of 100 turns of 2,000,000 tokens fail at once', async () => {
    const path = file(gen({ conversations: 1000, turns: constant(200), tokens: constant(2e6) }));
    assert.match(await refusal(path), /: the dataset would hold more than 100,000,000 tokens \(the bound of a generated dataset\); generate fewer or shorter conversations$/);
    // Tighter bounds apply the same way (answers and the shared system prompt count too).
    assert.match(await refusal(file(gen({ extra: { system_prompt: { num_tokens: constant(50) } } })), { totalTokens: 150 }), /more than 150 tokens/);
  });

  test('within the bounds nothing changes', async () => {
    const loaded = await loadDataset(file(gen({ tokens: constant(0), output: constant(0) })));
    assert.equal(loaded.conversations.length, 2, 'sizes of 0 are raised as before (to the fixed parts and to 1)');
    assert.equal(SIZE_BOUNDS.messageTokens, 2_000_000);
  });
});

describe('loaded datasets are bounded', () => {
  const conversation = (id: number, content = 'hi'): string => JSON.stringify({ id: `c${id}`, messages: [{ role: 'user', content }, { role: 'assistant', content: 'ok' }] });

  test('conversations, per JSON list and JSONL', async () => {
    const items = [0, 1, 2, 3].map((i) => conversation(i));
    assert.match(await refusal(file(`[${items.join(',')}]`), { loadedConversations: 3 }), /conversation 3: more than 3 conversations \(the bound of a loaded dataset\)$/);
    assert.match(await refusal(file(items.join('\n'), 'jsonl'), { loadedConversations: 3 }), /line 4, conversation 3: more than 3 conversations/);
  });

  test('characters of a message (also after ShareGPT merges a speaker\'s run), of a line, of the whole file', async () => {
    assert.match(await refusal(file(`[${conversation(0, 'x'.repeat(11))}]`), { messageChars: 10 }), /conversation 0 \(id "c0"\), message 0: "content" has 11 characters, over the bound of 10 per message$/);
    const sharegpt = JSON.stringify([{ id: 's', conversations: [{ from: 'human', value: 'x'.repeat(6) }, { from: 'human', value: 'y'.repeat(6) }, { from: 'gpt', value: 'a' }] }]);
    assert.match(await refusal(file(sharegpt), { messageChars: 10 }), /conversation 0 \(id "s"\), message 0: "content" has 14 characters/);
    assert.match(await refusal(file(`${conversation(0)}\n${conversation(1, 'x'.repeat(200))}\n`, 'jsonl'), { itemChars: 150 }), /line 2: the line is longer than 150 characters/);
    const lines = [0, 1, 2, 3, 4].map((i) => conversation(i)).join('\n');
    assert.match(await refusal(file(lines, 'jsonl'), { totalChars: 200 }), /conversation 2: the dataset holds more than 200 characters \(the bound of a streamed dataset\)$/);
  });
});

// The fuzz of test/reliability/fuzz-traces.test.ts found agentic configs bounded by nothing: 4,992 sessions of up to
// 46 parallel calls a step ran for minutes. The same bounds as a generate_conversations config now hold.
describe('agentic generation configs are bounded', () => {
  const agentic = (patch: Record<string, unknown>): string => JSON.stringify({ filetype: 'generate_agentic_sessions', preset: 'customer-service', ...patch });

  test('sessions, messages per session and tokens in all, each one line naming the file and the field', async () => {
    assert.match(await refusal(file(agentic({ num_sessions: 50 })), { generatedConversations: 10 }), /: num_sessions: 50 is over the bound of 10 sessions$/);
    const manyCalls = agentic({ num_sessions: 1, user_turns: constant(1), steps_per_turn: constant(1), parallel_calls: constant(80) });
    assert.match(await refusal(file(manyCalls), { generatedTurns: 60 }), /: session agent-0: more than 60 messages \(the bound of a generated conversation\); lower user_turns, steps_per_turn or parallel_calls$/);
    assert.match(await refusal(file(agentic({ num_sessions: 200 })), { totalTokens: 5_000 }), /: [a-z_]+: the sessions come to more than 5,000 tokens in all \(the bound of a generated dataset\); lower num_sessions or the sizes$/);
  });

  test('within the bounds a preset generates as before', async () => {
    const { conversations } = await loadDataset(file(agentic({ num_sessions: 2 })));
    assert.equal(conversations.length, 2);
  });
});
