import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { commonPrefixLength, PromptIds, restartMarkers } from '../../src/engine/prompt-ids.js';
import { defaultTokenCounter, encodePrompt, resolveTokenCounter, type ChatMessage, type TokenCounter } from '../../src/tokenizer/index.js';
import { LLAMA2_DIR, QWEN3_DIR } from '../helpers/tokenizers.js';

/** A conversation's requests turn by turn: each prompt's messages (history, then the next user message). */
function turns(): ChatMessage[][] {
  const history: ChatMessage[] = [{ role: 'system', content: 'You are terse.  Answer in one line.' }];
  const out: ChatMessage[][] = [];
  const users = ['Hello there!', 'What is 2+2?  ', 'Explain <b>bold</b> tags.', 'end\n\n', '数字 and émojis 🙂 ok?', '...'];
  users.forEach((user, i) => {
    out.push([...history, { role: 'user', content: user }]);
    history.push({ role: 'user', content: user }, { role: 'assistant', content: i % 2 === 0 ? `Answer ${i}.  ` : `Sure: ${'word '.repeat(i * 7)}` });
  });
  return out;
}

async function checkExact(counter: TokenCounter, expectMarkers: boolean): Promise<void> {
  const markers = restartMarkers(counter);
  assert.equal(markers !== null, expectMarkers, `markers: ${String(markers)}`);
  const ids = new PromptIds(counter.tokenizer, markers);
  let previous: number[] = [];
  for (const messages of turns()) {
    const update = ids.update(counter.template.apply(messages, { addGenerationPrompt: true }));
    const want = encodePrompt(counter, messages);
    assert.deepEqual([...update.ids.subarray(0, update.length)], want);
    // What it says is unchanged really is the previous prompt's first ids.
    assert.deepEqual(want.slice(0, update.unchanged), previous.slice(0, update.unchanged));
    if (expectMarkers && previous.length > 0) assert.ok(update.unchanged > previous.length / 2, `re-encoded from ${update.unchanged} of ${previous.length}`);
    previous = want;
  }
}

describe('PromptIds: a prompt\'s ids encoded turn by turn equal the whole prompt encoded', () => {
  test('the approximate tokenizer with ChatML (restarts at <|im_start|> and <|im_end|>)', async () => {
    await checkExact(defaultTokenCounter, true);
    assert.match(String(restartMarkers(defaultTokenCounter)), /im_start/);
  });
  test("Qwen3's tokenizer with its own chat template", async () => {
    await checkExact(await resolveTokenCounter({ tokenizer: QWEN3_DIR }), true);
  });
  test("Llama-2's tokenizer with ChatML, where <|im_start|> is plain text: encoded whole each turn, still exact", async () => {
    await checkExact(await resolveTokenCounter({ tokenizer: LLAMA2_DIR }), false);
  });
  test('a prompt that changes before the end (a template that rewrites history) restarts before the change', () => {
    const ids = new PromptIds(defaultTokenCounter.tokenizer, restartMarkers(defaultTokenCounter));
    const a = '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n';
    const b = '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi here<|im_end|>\n<|im_start|>user\nx';
    ids.update(a);
    const u = ids.update(b);
    assert.deepEqual([...u.ids.subarray(0, u.length)], defaultTokenCounter.tokenizer.encode(b));
    assert.equal(u.unchanged, defaultTokenCounter.tokenizer.encode('<|im_start|>user\nHello<|im_end|>\n<|im_start|>').length);
  });
});

test('commonPrefixLength', () => {
  assert.equal(commonPrefixLength('', 'abc'), 0);
  assert.equal(commonPrefixLength('abc', 'abcd'), 3);
  assert.equal(commonPrefixLength('abcd', 'abc'), 3);
  assert.equal(commonPrefixLength('abxd', 'abcd'), 2);
  assert.equal(commonPrefixLength('abc', 'abc'), 3);
});
