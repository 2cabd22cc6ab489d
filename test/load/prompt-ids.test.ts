import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { commonPrefixLength, PromptIds, restartMarkers } from '../../src/cache-model/prompt-ids.js';
import { Rng } from '../../src/util/rng.js';
import { chatmlTemplate, defaultTokenCounter, encodePrompt, resolveTokenCounter, type ChatMessage, type TokenCounter } from '../../src/tokenizer/index.js';
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
    const update = await ids.update(counter.template.apply(messages, { addGenerationPrompt: true }));
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
  test('a prompt that changes before the end (a template that rewrites history) restarts before the change', async () => {
    const ids = new PromptIds(defaultTokenCounter.tokenizer, restartMarkers(defaultTokenCounter));
    const a = '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n';
    const b = '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi here<|im_end|>\n<|im_start|>user\nx';
    await ids.update(a);
    const u = await ids.update(b);
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

/** Random message text: words, markup that looks like special tokens, whitespace runs, non-Latin text. */
function randomText(rng: Rng): string {
  const bits = ['hello', ' world', '  ', '\n', '\n\n', '<|im_end|>', '<|im_start|>', '<tool_call>', '</think>', 'é', '数字', '🙂', '{"a": 1}', '.', '12', '[INST]', 'x'];
  let out = '';
  for (let n = rng.int(0, 12); n > 0; n--) out += bits[rng.int(0, bits.length - 1)]!;
  return out;
}

/** A random message: plain or part-list content (with image parts), an assistant's tool calls, a tool's answer. */
function randomMessage(rng: Rng, n: number): ChatMessage {
  const kind = rng.int(0, 5);
  if (kind === 0) return { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'text', text: randomText(rng) }, { type: 'text', text: randomText(rng) }] };
  if (kind === 1) {
    const m: ChatMessage = { role: 'assistant', content: rng.chance(0.5) ? '' : randomText(rng) };
    m.tool_calls = [{ id: `call_${n}`, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ q: randomText(rng) }) } }];
    return m;
  }
  if (kind === 2) return { role: 'tool', content: randomText(rng), tool_call_id: `call_${n}` };
  if (kind === 3) return { role: 'assistant', content: randomText(rng) };
  return { role: 'user', content: randomText(rng) };
}

/**
 * Random conversations through one PromptIds, as the engine drives it: mostly appends (a turn's new messages), with
 * forks (another history sharing a prefix of the same message objects), self-contained turns (all new messages) and
 * a dropped last message. Every update must equal the rendered prompt encoded whole, and what it calls unchanged must
 * be the previous prompt's ids.
 */
async function checkRandom(counter: TokenCounter, seed: number, steps: number): Promise<number> {
  const rng = new Rng(seed);
  const rendering = counter.template.incremental!;
  const ids = new PromptIds(counter.tokenizer, restartMarkers(counter));
  let history: ChatMessage[] = [];
  let previous: number[] = [];
  let reused = 0;
  for (let step = 0; step < steps; step++) {
    const op = rng.int(0, 9);
    if (op === 0) history = history.slice(0, rng.int(0, history.length)); // a fork from a shared prefix
    else if (op === 1) history = []; // a self-contained turn
    else if (op === 2 && history.length > 0) history = history.slice(0, -1);
    for (let n = rng.int(op === 2 ? 0 : 1, 3); n > 0; n--) history.push(randomMessage(rng, step));
    const update = await ids.updateMessages(history, rendering);
    const want = encodePrompt(counter, history);
    assert.deepEqual([...update.ids.subarray(0, update.length)], want, `seed ${seed} step ${step}`);
    assert.deepEqual(want.slice(0, update.unchanged), previous.slice(0, update.unchanged), `seed ${seed} step ${step}: unchanged`);
    reused += update.unchanged;
    previous = want;
  }
  return reused;
}

describe('PromptIds.updateMessages: a message-by-message template rendered turn by turn, exact', () => {
  test('ChatML renders message by message: apply equals the messages rendered one by one', () => {
    const rng = new Rng(7);
    const messages = Array.from({ length: 30 }, (_, i) => randomMessage(rng, i));
    const r = chatmlTemplate.incremental!;
    assert.equal(chatmlTemplate.apply(messages, { addGenerationPrompt: true }), messages.map((m) => r.renderParts(m).join('')).join('') + r.generationPrompt);
    assert.equal(chatmlTemplate.apply(messages, { addGenerationPrompt: false }), messages.map((m) => r.renderParts(m).join('')).join(''));
  });
  test('the approximate tokenizer, random conversations with tool calls and image parts', async () => {
    for (let seed = 1; seed <= 40; seed++) assert.ok(await checkRandom(defaultTokenCounter, seed, 40) > 0, 'earlier ids are reused');
  });
  test("Qwen3's tokenizer with ChatML (its markers are added tokens), random conversations", async () => {
    const qwen = await resolveTokenCounter({ tokenizer: QWEN3_DIR });
    const counter: TokenCounter = { tokenizer: qwen.tokenizer, template: chatmlTemplate };
    assert.notEqual(restartMarkers(counter), null);
    for (let seed = 1; seed <= 12; seed++) assert.ok(await checkRandom(counter, seed, 30) > 0, 'earlier ids are reused');
  });
  test("Llama-2's tokenizer with ChatML (no restart marker): encoded whole each turn, still exact", async () => {
    const llama = await resolveTokenCounter({ tokenizer: LLAMA2_DIR });
    const counter: TokenCounter = { tokenizer: llama.tokenizer, template: chatmlTemplate };
    assert.equal(restartMarkers(counter), null);
    for (let seed = 1; seed <= 4; seed++) assert.equal(await checkRandom(counter, seed, 20), 0);
  });
  test('a turn that appends a message re-encodes only the new text, from the last marker before it', async () => {
    const counter = defaultTokenCounter;
    const ids = new PromptIds(counter.tokenizer, restartMarkers(counter));
    const history: ChatMessage[] = [{ role: 'system', content: 'S '.repeat(500) }, { role: 'user', content: 'hi' }];
    const first = await ids.updateMessages(history, chatmlTemplate.incremental!);
    const firstLength = first.length;
    history.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' });
    const second = await ids.updateMessages(history, chatmlTemplate.incremental!);
    assert.deepEqual([...second.ids.subarray(0, second.length)], encodePrompt(counter, history));
    // Everything up to the last message's closing marker is kept; the generation prompt and the new messages are new.
    const kept = counter.tokenizer.encode(chatmlTemplate.apply(history.slice(0, 2), { addGenerationPrompt: false })).length - counter.tokenizer.encode('\n').length;
    assert.equal(second.unchanged, kept);
    assert.ok(second.unchanged < firstLength);
  });
});

test('PromptIds: messages of millions of characters, with markers at and around the search window edges, encode as the whole prompt does', { timeout: 60_000 }, async () => {
  // The marker search goes through a long text 2^20 characters at a time from the last marker's end (issue #14): a
  // marker starting just before, at and just after that edge must be found where a search of the whole text finds it.
  const counter = defaultTokenCounter;
  const window = 1024 * 1024;
  const filler = (n: number): string => 'ab '.repeat(Math.floor(n / 3)) + 'x'.repeat(n % 3);
  let content = 'start ';
  for (const [d, marker] of [[-13, '<|im_end|>'], [-1, '<|im_start|>'], [0, '<|im_end|>'], [3, '<|im_start|>']] as const) content += filler(window + d) + marker;
  content += ' tail';
  const ids = new PromptIds(counter.tokenizer, restartMarkers(counter));
  const history: ChatMessage[] = [{ role: 'system', content: 'be brief' }, { role: 'user', content }];
  const first = await ids.updateMessages(history, chatmlTemplate.incremental!);
  assert.deepEqual([...first.ids.subarray(0, first.length)], encodePrompt(counter, history));
  // Next turn: re-encoded from the last marker inside the long message (its kept rendering is sliced, not copied).
  history.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' });
  const second = await ids.updateMessages(history, chatmlTemplate.incremental!);
  assert.deepEqual([...second.ids.subarray(0, second.length)], encodePrompt(counter, history));
  assert.ok(second.unchanged > first.length - 10, 'only the end of the long message and the new ones were encoded again');
});

test('PromptIds: a marker across the edge of a search window is a restart point (a change after it re-encodes from it)', { timeout: 60_000 }, async () => {
  const counter = defaultTokenCounter;
  const filler = (n: number): string => 'ab '.repeat(Math.floor(n / 3)) + 'x'.repeat(n % 3);
  // The search starts at 0; the marker starts one character before the first window's edge (2^20).
  const head = `${filler(1024 * 1024 - 1)}<|im_start|>`;
  const ids = new PromptIds(counter.tokenizer, restartMarkers(counter));
  const first = await ids.update(`${head}${filler(3000)} the end`);
  assert.deepEqual([...first.ids.subarray(0, first.length)], counter.tokenizer.encode(`${head}${filler(3000)} the end`));
  const changed = `${head}${filler(2000)} another end`;
  const second = await ids.update(changed);
  assert.deepEqual([...second.ids.subarray(0, second.length)], counter.tokenizer.encode(changed));
  assert.equal(second.unchanged, counter.tokenizer.encode(head).length, 'kept up to the marker across the edge');
});

/**
 * Long random text: words, whitespace runs, non-Latin text, now and then a run of 1,000-2,000 characters with no
 * whitespace and, rarely, a restart marker, so that the text between markers is long and is encoded in slices. (A
 * run of over 4,096 characters with no word boundary is cut anyway, which tokenizer/sliced.ts says may shift ids.)
 */
function longText(rng: Rng, chars: number): string {
  const bits = ['word ', 'x', '  ', '\n', 'é', '🙂', '.', ' 12', 'abcdefgh', ' ', '\t\n'];
  const pieces: string[] = [];
  let n = 0;
  while (n < chars) {
    const r = rng.next();
    const bit = r < 0.0002 ? (rng.chance(0.5) ? '<|im_end|>' : '<|im_start|>') : r < 0.0004 ? `${'q'.repeat(rng.int(1000, 2000))} ` : bits[rng.int(0, bits.length - 1)]!;
    pieces.push(bit);
    n += bit.length;
  }
  // Flat, as JSON.parse gives a message's content.
  return Buffer.from(pieces.join('')).toString();
}

test('PromptIds.updateMessages: 1-2 MB contents read as template parts (never concatenated) give the ids of the rendered prompt encoded whole', { timeout: 120_000 }, async () => {
  // A content's edges sit next to the template's markup: a piece of the tokenizer may cross from one part into the
  // next (a content ending in a word, then `<|im_end|>`; a content starting with spaces after `user\n`), and the
  // slices a long text is encoded in may end anywhere near a part's edge. The ids must be those of the whole text.
  const counter = defaultTokenCounter;
  const rendering = chatmlTemplate.incremental!;
  for (let seed = 1; seed <= 2; seed++) {
    const rng = new Rng(seed);
    const ids = new PromptIds(counter.tokenizer, restartMarkers(counter));
    const edge = (): string => [' ', '  ', '\n', 'ab', '<|im_', '|>', 'é', '', 'q'.repeat(1500), ' '.repeat(1500)][rng.int(0, 9)]!;
    const history: ChatMessage[] = [{ role: 'system', content: 'be brief' }];
    for (let turn = 0; turn < 3; turn++) {
      const content = edge() + longText(rng, rng.int(1_000_000, 2_000_000)) + edge();
      history.push(turn === 1 ? { role: 'user', content: [{ type: 'text', text: content }, { type: 'text', text: edge() + longText(rng, 50_000) }] } : { role: 'tool', content, tool_call_id: `c${turn}` });
      const update = await ids.updateMessages(history, rendering);
      const want = encodePrompt(counter, history);
      const got = update.ids.subarray(0, update.length);
      // Compared as one buffer: deepEqual over millions of ids takes seconds.
      const differs = got.length !== want.length || Buffer.compare(Buffer.from(got.buffer, got.byteOffset, got.byteLength), Buffer.from(Uint32Array.from(want).buffer)) !== 0;
      assert.ok(!differs, `seed ${seed} turn ${turn}: ${got.length} ids, want ${want.length}; first difference at ${want.findIndex((id, k) => got[k] !== id)}`);
      history.push({ role: 'assistant', content: edge() + 'ok' + edge(), tool_calls: [{ id: `c${turn + 1}`, type: 'function', function: { name: 'f', arguments: '{}' } }] });
    }
  }
});
