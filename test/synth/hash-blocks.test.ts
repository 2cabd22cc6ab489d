import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { HashBlockText } from '../../src/synth/hash-blocks.js';
import { approxTokenizer, resolveTokenCounter, type TokenCounter } from '../../src/tokenizer/index.js';
import { LLAMA2_DIR, QWEN3_DIR } from '../helpers/tokenizers.js';

describe('hash-id blocks under a real tokenizer (Qwen3)', () => {
  let qwen: TokenCounter;
  let blocks: HashBlockText;
  before(async () => {
    qwen = await resolveTokenCounter({ tokenizer: QWEN3_DIR, trustRemoteCode: false });
    blocks = new HashBlockText(qwen.tokenizer, 0);
  });

  test('the vocabulary is words of one token each, and the self-check finds blocks exact', () => {
    assert.ok(blocks.words.length >= 100, `${blocks.words.length} words`);
    assert.equal(blocks.exact, true);
  });

  test('a prompt is exactly input_length tokens, and each block is exactly its tokens at its offset', () => {
    const B = 64;
    const ids = [7, 3, 7, 9, 123456789012];
    const input = 4 * B + 21; // the last block trimmed to 21 tokens
    const prompt = blocks.prompt(ids, input, B);
    const encoded = qwen.tokenizer.encode(`a${prompt}`).slice(qwen.tokenizer.encode('a').length);
    assert.equal(encoded.length, input);
    for (let k = 0; k < ids.length; k++) {
      const n = Math.min(B, input - k * B);
      const alone = qwen.tokenizer.encode(`a${blocks.block(ids[k]!, n)}`).slice(1);
      assert.deepEqual(encoded.slice(k * B, k * B + n), alone, `block ${k} (id ${ids[k]}) tokenizes the same in the prompt as alone`);
    }
    // Equal ids give identical token blocks, different ids different ones.
    assert.deepEqual(encoded.slice(0, B), encoded.slice(2 * B, 3 * B));
    assert.notDeepEqual(encoded.slice(0, B), encoded.slice(B, 2 * B));
  });

  test('two prompts sharing leading hash ids share exactly those blocks of tokens under the chat template, and the template prefix is shorter than a block', () => {
    const B = 16;
    const render = (ids: number[], n: number): number[] =>
      qwen.tokenizer.encode(qwen.template.apply([{ role: 'user', content: blocks.prompt(ids, n, B) }], { addGenerationPrompt: true }));
    const a = render([1, 2, 3, 4], 64);
    const b = render([1, 2, 3, 5], 64);
    let shared = 0;
    while (shared < a.length && a[shared] === b[shared]) shared++;
    const prefix = qwen.tokenizer.encode(qwen.template.apply([{ role: 'user', content: '' }], { addGenerationPrompt: true })).length;
    const templatePrefix = a.length - 64 - (prefix - qwen.tokenizer.encode('<|im_start|>user\n').length) ;
    assert.ok(templatePrefix < B, `template prefix ${templatePrefix} tokens`);
    // The shared run is the template prefix plus three whole blocks (a chance equal first word of block 4 aside).
    assert.ok(shared >= templatePrefix + 3 * B && shared < templatePrefix + 3 * B + 3, `shared ${shared}`);
    // So a prefix cache of B-token blocks reuses floor(shared / B) = 3 blocks: the trace's prediction.
    assert.equal(Math.floor(shared / B), 3);
  });

  test('text depends on the seed and the id only: a second maker with the same seed makes the same blocks', () => {
    const again = new HashBlockText(qwen.tokenizer, 0);
    assert.equal(again.prompt([5, 6], 30, 16), blocks.prompt([5, 6], 30, 16));
    assert.notEqual(new HashBlockText(qwen.tokenizer, 1).block(5, 16), blocks.block(5, 16));
  });
});

describe('hash-id blocks under other tokenizers', () => {
  test('Llama-2 (SentencePiece) and the approximate tokenizer are exact inside a text', async () => {
    const llama = await resolveTokenCounter({ tokenizer: LLAMA2_DIR, trustRemoteCode: false });
    for (const tokenizer of [llama.tokenizer, approxTokenizer]) {
      const blocks = new HashBlockText(tokenizer, 3);
      assert.equal(blocks.exact, true, tokenizer.name);
      const prompt = blocks.prompt([1, 2, 3], 100, 40);
      assert.equal(tokenizer.count(`x${prompt}`) - tokenizer.count('x'), 100, tokenizer.name);
    }
  });
});
