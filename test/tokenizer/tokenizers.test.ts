import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../src/errors/index.js';
import { startSimulator } from '../../src/sim/index.js';
import { HfTokenizer } from '../../src/tokenizer/hf.js';
import { countPromptTokens, encodePrompt, resolveTokenCounter, type ChatMessage } from '../../src/tokenizer/index.js';
import { Rng } from '../../src/util/rng.js';
import { tempDir } from '../helpers/tmp.js';
import { LLAMA2_DIR, QWEN3_DIR } from '../helpers/tokenizers.js';

const conversation = [
  { role: 'system' as const, content: 'You are a careful assistant.' },
  { role: 'user' as const, content: 'The ship left port on a grey morning. Where did it go?' },
  { role: 'assistant' as const, content: 'It sailed south, towards the warm current.' },
  { role: 'user' as const, content: 'And then?  Tell me more, with détails and 日本語.' },
];

describe('resolveTokenCounter', { timeout: 60_000 }, () => {
  test('a model folder with a chat template (Qwen3): the template renders as transformers does', async () => {
    const counter = await resolveTokenCounter({ tokenizer: QWEN3_DIR });
    const prompt = counter.template.apply(conversation.slice(0, 2), { addGenerationPrompt: true });
    assert.equal(prompt, '<|im_start|>system\nYou are a careful assistant.<|im_end|>\n<|im_start|>user\nThe ship left port on a grey morning. Where did it go?<|im_end|>\n<|im_start|>assistant\n');
    // Special-token markup is one token each.
    const ids = counter.tokenizer.encode('<|im_start|>user\nhi<|im_end|>');
    assert.deepEqual(ids, [151644, 872, 198, 6023, 151645]);
    assert.equal(counter.tokenizer.decode!(ids), '<|im_start|>user\nhi<|im_end|>');
  });

  test('a tokenizer.json file; a folder without a template warns and uses ChatML', async () => {
    const warnings: string[] = [];
    const counter = await resolveTokenCounter({ tokenizer: join(LLAMA2_DIR, 'tokenizer.json'), warn: (w) => warnings.push(w) });
    assert.equal(counter.template.name, 'chatml');
    assert.match(warnings.join('\n'), /no chat template; counting prompts with ChatML/);
    assert.deepEqual(counter.tokenizer.encode('Hello world'), [22557, 1526]);
  });

  test('tiktoken encodings and approx', async () => {
    const cl = await resolveTokenCounter({ tokenizer: 'tiktoken:cl100k_base' });
    assert.deepEqual(cl.tokenizer.encode('hello world'), [15339, 1917]);
    const o200 = await resolveTokenCounter({ tokenizer: 'tiktoken:o200k_base' });
    assert.equal(o200.tokenizer.name, 'tiktoken:o200k_base');
    assert.equal(o200.tokenizer.decode!(o200.tokenizer.encode('héllo <|endoftext|>')), 'héllo <|endoftext|>');
    const warnings: string[] = [];
    const approx = await resolveTokenCounter({ tokenizer: 'approx', warn: (w) => warnings.push(w) });
    assert.equal(approx.tokenizer.exact, false);
    assert.match(warnings[0]!, /approximate/);
  });

  test('bad specs are one-line ConfigErrors (exit 2)', async () => {
    const dir = tempDir('tok-bad');
    mkdirSync(join(dir, 'empty'));
    writeFileSync(join(dir, 'bad.json'), '{"not": "a tokenizer"}');
    const cases: [string, RegExp][] = [
      ['tiktoken:p50k', /unknown encoding "p50k"/],
      ['./nowhere/tokenizer.json', /no such file or folder/],
      [join(dir, 'empty'), /has no tokenizer\.json/],
      [join(dir, 'bad.json'), /not a Hugging Face tokenizer\.json/],
      ['a b c', /not a Hugging Face model id/],
    ];
    for (const [spec, pattern] of cases) {
      await assert.rejects(resolveTokenCounter({ tokenizer: spec }), (e: unknown) => e instanceof ConfigError && e.exitCode === 2 && !e.message.includes('\n') && pattern.test(e.message), spec);
    }
  });

  test("the SentencePiece word-by-word fast path gives the library's exact ids", () => {
    const json = JSON.parse(readFileSync(join(LLAMA2_DIR, 'tokenizer.json'), 'utf8')) as object;
    const config = JSON.parse(readFileSync(join(LLAMA2_DIR, 'tokenizer_config.json'), 'utf8')) as object;
    const library = new LibraryTokenizer(json, config);
    const fast = new HfTokenizer('llama', json, config);
    const pieces = ['the', 'Ship', ' ', '  ', '\n', '\n\n', '.', ', ', 'é', '日本', '😀', '\t', "'s", '1984', ' -- ', 'wonderful'];
    const rng = new Rng(5);
    for (let k = 0; k < 400; k++) {
      let text = '';
      const n = rng.int(20, 80);
      for (let i = 0; i < n; i++) text += pieces[rng.int(0, pieces.length - 1)]!;
      assert.deepEqual(fast.encode(text), library.encode(text, { add_special_tokens: false }).ids, JSON.stringify(text));
    }
  });
});

describe('the simulator counts prompts with the same tokenizer and template', { timeout: 60_000 }, () => {
  test('usage.prompt_tokens equals our local count (Qwen3)', async () => {
    // A copy of the folder under a new path: the simulator resolves it on its own, like `serve --tokenizer DIR`.
    const dir = tempDir('qwen');
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(QWEN3_DIR, f), join(dir, f));
    const sim = await startSimulator({ tokenizer: dir, seed: 1 });
    try {
      const local = await resolveTokenCounter({ tokenizer: QWEN3_DIR });
      for (const messages of [conversation.slice(0, 2), conversation]) {
        const response = await fetch(`${sim.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chatload-sim', messages, max_tokens: 2, stream: false }),
        });
        assert.equal(response.status, 200);
        const body = (await response.json()) as { usage: { prompt_tokens: number } };
        assert.equal(body.usage.prompt_tokens, countPromptTokens(local, messages));
      }
    } finally {
      await sim.close();
    }
  });

  test('with a real tokenizer, the next turn\'s cache hit reaches into the previous answer (Qwen3)', async () => {
    const dir = tempDir('qwen-answer');
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(QWEN3_DIR, f), join(dir, f));
    const sim = await startSimulator({ tokenizer: dir, seed: 3 });
    try {
      const local = await resolveTokenCounter({ tokenizer: QWEN3_DIR });
      const chat = async (messages: ChatMessage[]) => {
        const response = await fetch(`${sim.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chatload-sim', messages, max_tokens: 40, temperature: 0, stream: false }),
        });
        assert.equal(response.status, 200);
        return (await response.json()) as { choices: [{ message: { content: string } }]; usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } } };
      };
      const first: ChatMessage[] = [conversation[0]!, conversation[1]!];
      const turn1 = await chat(first);
      const answer = turn1.choices[0].message.content;
      // The answer re-encodes to one token per generated word, as the engine appended them.
      assert.equal(local.tokenizer.encode(answer).length, turn1.usage.completion_tokens);
      const second: ChatMessage[] = [...first, { role: 'assistant', content: answer }, { role: 'user', content: 'And then?' }];
      const turn2 = await chat(second);
      // What the engine cached after turn 1 (its prompt and its answer) against what turn 2's prompt encodes to.
      const cachedSequence = [...encodePrompt(local, first), ...local.tokenizer.encode(answer)];
      const nextPrompt = encodePrompt(local, second);
      let common = 0;
      while (common < cachedSequence.length && cachedSequence[common] === nextPrompt[common]) common++;
      const blockAligned = Math.floor(common / 16) * 16;
      assert.ok(common > turn1.usage.prompt_tokens + 30, `the shared prefix (${common}) runs through the answer`);
      assert.equal(turn2.usage.prompt_tokens_details.cached_tokens, blockAligned);
      assert.ok(blockAligned > turn1.usage.prompt_tokens, 'the hit goes past the previous prompt');
    } finally {
      await sim.close();
    }
  });

  test('a chat template that rejects the messages is a 400 naming the reason, as vLLM answers', async () => {
    const dir = tempDir('strict-template');
    copyFileSync(join(QWEN3_DIR, 'tokenizer.json'), join(dir, 'tokenizer.json'));
    const config = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    config.chat_template =
      "{% if messages[0]['role'] != 'user' %}{{ raise_exception('Conversations must start with a user message') }}{% endif %}" +
      "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n";
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
    const sim = await startSimulator({ tokenizer: dir, seed: 1 });
    try {
      const send = (messages: unknown) =>
        fetch(`${sim.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'chatload-sim', messages, max_tokens: 2 }) });
      const rejected = await send([{ role: 'assistant', content: 'hello' }, { role: 'user', content: 'hi' }]);
      assert.equal(rejected.status, 400);
      const body = (await rejected.json()) as { error: { message: string; param: string | null } };
      assert.match(body.error.message, /Conversations must start with a user message/);
      assert.equal(body.error.param, 'messages');
      assert.equal((await send([{ role: 'user', content: 'hi' }])).status, 200, 'the same template accepts a valid conversation');
    } finally {
      await sim.close();
    }
  });
});
