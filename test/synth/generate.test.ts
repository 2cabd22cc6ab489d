import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConversations, loadDataset, writeConversations } from '../../src/conversation/index.js';
import { ConfigError } from '../../src/errors/index.js';
import { BASE_PROMPT, conversationHeader } from '../../src/synth/generate.js';
import { messageText, resolveTokenCounter } from '../../src/tokenizer/index.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURES, LLAMA2_DIR } from '../helpers/tokenizers.js';

/** The reference's config, unchanged, beside a text file of our own under the name it expects. */
function referenceSetup(): string {
  const dir = tempDir('gen');
  copyFileSync(join(FIXTURES, 'generate_multi_turn.json'), join(dir, 'generate_multi_turn.json'));
  copyFileSync(join(FIXTURES, 'corpus-voyage.txt'), join(dir, 'pg1184.txt'));
  return join(dir, 'generate_multi_turn.json');
}

describe('generate_conversations with the reference config and Llama-2', { timeout: 60_000 }, () => {
  test('24 conversations, exact user-turn sizes, byte-identical for a seed', async () => {
    const counter = await resolveTokenCounter({ tokenizer: LLAMA2_DIR });
    const config = referenceSetup();
    const a = await loadDataset(config, { counter, seed: 0 });
    assert.equal(a.format, 'generate');
    assert.equal(a.conversations.length, 24);
    const tok = counter.tokenizer;
    let checked = 0;
    a.conversations.forEach((c, i) => {
      assert.equal(c.id, `CONV_ID_${i}`);
      const users = c.messages.filter((m) => m.role === 'user');
      assert.ok(users.length >= 6 && users.length <= 9, `12-18 messages give 6-9 user turns, got ${users.length}`);
      assert.equal(c.messages.length, users.length * 2);
      users.forEach((m, t) => {
        const turn = a.generated!.userTurns[i]![t]!;
        // Re-encode here, independently of the generator's own accounting.
        assert.equal(tok.count(messageText(m.content)), turn.target, `conversation ${i} turn ${t}`);
        if (turn.sampled >= turn.target) assert.equal(turn.target, turn.sampled);
        assert.ok(messageText(m.content).includes(`${conversationHeader(i)}`) && messageText(m.content).includes(BASE_PROMPT));
        checked += 1;
      });
      // The common prefix (500 tokens) opens every first turn, and only the first.
      assert.ok(messageText(users[0]!.content).startsWith(messageText(a.conversations[0]!.messages[0]!.content).slice(0, 200)));
      assert.ok(messageText(users[0]!.content).includes(`${i}, `));
      for (const [t, turn] of (c.turns ?? []).entries()) {
        assert.ok(turn.maxTokens! >= 80 && turn.maxTokens! <= 120, `max_tokens ${turn.maxTokens} at turn ${t}`);
      }
    });
    assert.ok(checked > 24 * 6);
    assert.equal(a.generated!.maxDrift, 0);

    const dir = tempDir('gen-out');
    await writeConversations(join(dir, 'a.json'), a.conversations);
    const b = await loadDataset(config, { counter, seed: 0 });
    await writeConversations(join(dir, 'b.json'), b.conversations);
    assert.ok(readFileSync(join(dir, 'a.json')).equals(readFileSync(join(dir, 'b.json'))), 'same seed, same bytes');
    const c = await loadDataset(config, { counter, seed: 1 });
    await writeConversations(join(dir, 'c.json'), c.conversations);
    assert.ok(!readFileSync(join(dir, 'a.json')).equals(readFileSync(join(dir, 'c.json'))), 'another seed, another dataset');

    // The written file loads back with the per-turn settings.
    const back = await loadConversations(join(dir, 'a.json'));
    assert.deepEqual(back, a.conversations);
  });
});

describe('generation extensions', { timeout: 30_000 }, () => {
  const base = {
    filetype: 'generate_conversations',
    num_conversations: 5,
    prompt_input: { num_turns: { distribution: 'constant', value: 6 }, num_tokens: { distribution: 'uniform', min: 40, max: 80 } },
    prompt_output: { num_tokens: { distribution: 'poisson', alpha: 30, max: 40 } },
  };

  test('system_prompt (shared text, or generated per conversation), think_time, built-in corpus', async () => {
    const counter = await resolveTokenCounter({ tokenizer: 'tiktoken:cl100k_base' });
    const dir = tempDir('gen-ext');
    const shared = join(dir, 'shared.json');
    writeFileSync(shared, JSON.stringify({ ...base, system_prompt: 'You are terse.', think_time: { distribution: 'exponential', mean: 2 } }));
    const a = await loadConversations(shared, { counter, seed: 3 });
    for (const c of a) {
      assert.deepEqual(c.messages[0], { role: 'system', content: 'You are terse.' });
      assert.equal(c.turns!.length, 3);
      assert.equal(c.turns![0]!.thinkTimeSec, undefined, 'no think time before the first turn');
      assert.ok(c.turns!.slice(1).every((t) => typeof t.thinkTimeSec === 'number' && t.thinkTimeSec >= 0));
      assert.ok(c.turns!.every((t) => t.maxTokens! <= 40));
    }
    const perConversation = join(dir, 'per.json');
    writeFileSync(perConversation, JSON.stringify({ ...base, system_prompt: { num_tokens: { distribution: 'constant', value: 50 }, shared: false } }));
    const b = await loadConversations(perConversation, { counter, seed: 3 });
    const systems = b.map((c) => messageText(c.messages[0]!.content));
    assert.equal(new Set(systems).size, 5);
    for (const s of systems) assert.ok(Math.abs(counter.tokenizer.count(s) - 50) <= 1);
  });

  test('text_files resolve against the config folder; a missing one is a ConfigError', async () => {
    const dir = tempDir('gen-files');
    copyFileSync(join(FIXTURES, 'corpus-voyage.txt'), join(dir, 'voyage.txt'));
    const config = join(dir, 'c.json');
    writeFileSync(config, JSON.stringify({ ...base, text_files: ['voyage.txt'] }));
    const conversations = await loadConversations(config, { counter: await resolveTokenCounter({ tokenizer: 'tiktoken:o200k_base' }) });
    assert.match(messageText(conversations[0]!.messages[0]!.content), /ship|crew|harbour|captain|wind|sea|voyage/i);
    writeFileSync(config, JSON.stringify({ ...base, text_files: ['missing.txt'] }));
    await assert.rejects(loadConversations(config), (e: unknown) => e instanceof ConfigError && /missing\.txt: cannot read the file: no such file/.test(e.message));
  });
});
