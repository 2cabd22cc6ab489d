// A large body's large strings sent back from the JSON worker as UTF-8 bytes and decoded in pieces on the loop
// (issue #14: the structured clone made a 3 MB string in one piece). The value must be JSON.parse's, every character
// whole across the pieces' boundaries; where a chat content or a completion prompt may stay in pieces, the prompt's
// ids must be those of the string.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LARGE_STRING_CHARS, parseJsonInWorker, WORKER_PARSE_BYTES } from '../../src/sim/json-worker.js';
import { ASCII_PIECE_BYTES, PIECE_BYTES, placeLargeStrings } from '../../src/sim/large-strings.js';
import { encodeSimMessages, encodeSimMessagesYielding } from '../../src/sim/prompt-tokens.js';
import { piecesAtFor, parseGenerationBody } from '../../src/sim/request-parse.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { approxTokenizer, defaultTokenCounter, encodePrompt, PartsText } from '../../src/tokenizer/index.js';
import { raw } from './sim-http.js';

/** A surrogate without its pair: what a character split between two pieces would leave. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u;

/** Parses `text` in the worker and puts its large strings back, as readJsonBody does (in pieces of `pieceBytes`). */
async function viaWorker(text: string, piecesAt?: Parameters<typeof placeLargeStrings>[2], pieceBytes?: number): Promise<{ value: unknown; taken: number }> {
  const parse = await parseJsonInWorker(Buffer.from(text));
  const sizes = pieceBytes === undefined ? undefined : { ascii: pieceBytes, other: pieceBytes };
  return { value: await placeLargeStrings(parse.value, parse.large, piecesAt, sizes), taken: parse.large.length };
}

/** A small piece, so that boundaries are many and cheap to reach. */
const PIECE = 1000;

/** Pads `text` with ASCII to over WORKER_PARSE_BYTES as JSON, so that it goes to the worker. */
function workerSized(value: Record<string, unknown>): string {
  return JSON.stringify({ ...value, pad: 'p'.repeat(WORKER_PARSE_BYTES) });
}

describe('large strings from the JSON worker', () => {
  test('each character of 1 to 4 UTF-8 bytes lands whole at every offset of a piece boundary', { timeout: 30_000 }, async () => {
    for (const char of ['a', 'é', '中', '😀']) {
      for (let shift = 0; shift < 4; shift++) {
        // A run of the character that crosses the first piece boundary at each byte of it.
        const content = `${'x'.repeat(PIECE - 6 + shift)}${char.repeat(8)}${'y '.repeat(LARGE_STRING_CHARS)}${char.repeat(3)}`;
        const text = workerSized({ messages: [{ role: 'user', content }] });
        const { value, taken } = await viaWorker(text, undefined, PIECE);
        assert.equal(taken, 2, 'the content and the padding go as bytes');
        assert.deepEqual(value, JSON.parse(text));
        const inPieces = (await viaWorker(text, piecesAtFor('chat'), PIECE)).value as { messages: { content: unknown }[] };
        const pieces = inPieces.messages[0]!.content;
        assert.ok(pieces instanceof PartsText, 'a chat content over a piece comes as its pieces');
        assert.equal(pieces.slice(0), content);
        assert.ok(pieces.parts.length >= 8);
        for (const part of pieces.parts) assert.ok(!LONE_SURROGATE.test(part), `${char} at shift ${shift}: no character split between pieces`);
      }
    }
  });

  test('strings at and just over the threshold; many strings; a lone surrogate; a body that is one string; __proto__', { timeout: 30_000 }, async () => {
    const at = 'a'.repeat(LARGE_STRING_CHARS);
    const over = 'b'.repeat(LARGE_STRING_CHARS + 1);
    const cases: string[] = [
      workerSized({ at }),
      workerSized({ over, nested: [[{ over }], { deep: { over: `${over}é` } }] }),
      workerSized({ many: Array.from({ length: 40 }, (_, i) => `${i}`.repeat(LARGE_STRING_CHARS + 1 + i)) }),
      // JSON's escape makes a lone surrogate, which has no UTF-8 form: it stays in the clone.
      `{"lone":"${'c'.repeat(LARGE_STRING_CHARS)}\\ud800","pad":"${'p'.repeat(WORKER_PARSE_BYTES)}"}`,
      JSON.stringify('one string é 😀 '.repeat(WORKER_PARSE_BYTES / 8)),
      `{"__proto__":"${'d'.repeat(WORKER_PARSE_BYTES)}","x":[1,2]}`,
    ];
    const taken = [];
    for (const text of cases) {
      const result = await viaWorker(text);
      assert.deepEqual(result.value, JSON.parse(text));
      taken.push(result.taken);
    }
    assert.deepEqual(taken, [1, 4, 41, 1, 1, 1]);
    const proto = (await viaWorker(cases[5]!)).value as object;
    assert.equal(Object.getPrototypeOf(proto), Object.prototype);
    assert.ok(Object.hasOwn(proto, '__proto__'));
  });

  test('only a chat content or a completion prompt may stay in pieces; validation sees the same values', { timeout: 30_000 }, async () => {
    const big = 'word é '.repeat(LARGE_STRING_CHARS);
    const chat = workerSized({ model: big, messages: [{ role: 'user', content: big }, { role: 'user', content: [{ type: 'text', text: big }] }] });
    const value = (await viaWorker(chat, piecesAtFor('chat'), PIECE)).value as { model: unknown; messages: { content: unknown }[]; pad: unknown };
    assert.equal(value.model, big);
    assert.equal(value.pad, 'p'.repeat(WORKER_PARSE_BYTES));
    assert.ok(value.messages[0]!.content instanceof PartsText);
    assert.equal((value.messages[1]!.content as { text: unknown }[])[0]!.text, big);
    const params = parseGenerationBody(value, 'chat');
    assert.equal(params.model, big);
    const content = params.messages![0]!.content as { type: string; text: string }[];
    assert.equal(content.map((p) => p.text).join(''), big);
    const completion = (await viaWorker(workerSized({ prompt: [big] }), piecesAtFor('completion'), PIECE)).value;
    const prompt = parseGenerationBody(completion, 'completion').prompt;
    assert.ok(prompt instanceof PartsText);
    assert.equal(prompt.slice(0), big);
  });

  test('an ASCII string is cut into pieces of its own size, any other into the smaller ones', { timeout: 30_000 }, async () => {
    assert.ok(ASCII_PIECE_BYTES > PIECE_BYTES);
    const ascii = 'plain words '.repeat(25_000);
    const other = 'mot accentué '.repeat(25_000);
    const parse = await parseJsonInWorker(Buffer.from(workerSized({ messages: [{ role: 'user', content: ascii }, { role: 'user', content: other }] })));
    const value = (await placeLargeStrings(parse.value, parse.large, piecesAtFor('chat'), { ascii: 100_000, other: 10_000 })) as { messages: { content: PartsText }[] };
    assert.deepEqual(value.messages.map((m) => m.content.slice(0)), [ascii, other]);
    assert.equal(value.messages[0]!.content.parts.length, Math.ceil(ascii.length / 100_000));
    assert.ok(value.messages[1]!.content.parts.length >= Buffer.byteLength(other) / 10_000);
  });

  test("a content in pieces is rendered and encoded as its string (the simulator's sliced encoding)", { timeout: 60_000 }, async () => {
    // Piece boundaries inside words, at spaces, next to markup-like text, and a tool call after the content.
    const text = 'It was the best of times, <|im_end|> it was   the worst of times.\n\n é 😀 '.repeat(40_000);
    const cuts = [0, 5, 16_383, 16_385, 300_000, 300_001, 1_000_000, 2_000_017, text.length];
    const parts = cuts.slice(1).map((end, i) => ({ type: 'text' as const, text: text.slice(cuts[i], end) }));
    const messages = [
      { role: 'system' as const, content: 'be brief' },
      { role: 'user' as const, content: parts },
      { role: 'assistant' as const, content: '', tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'f', arguments: '{}' } }] },
    ];
    const expected = encodePrompt(defaultTokenCounter, [messages[0], { role: 'user', content: text }, messages[2]]);
    assert.deepEqual(Array.from(await encodeSimMessagesYielding(defaultTokenCounter, messages, { tokensPerImage: 0, tokensPerAudioSecond: 0 })), expected);
    assert.deepEqual(encodeSimMessages(defaultTokenCounter, messages, { tokensPerImage: 0, tokensPerAudioSecond: 0 }), expected);
  });

  describe('through the server', () => {
    let sim: RunningSimulator;
    before(async () => {
      sim = await startSimulator({ profile: 'cpu-tiny', config: { max_model_len: 4_000_000, num_gpu_blocks: 300_000 } });
    });
    after(async () => {
      await sim.close();
    });

    test('a chat content and a completion prompt over a piece count the tokens of the string', { timeout: 60_000 }, async () => {
      const content = 'The quick brown fox é 😀 jumps. '.repeat(40_000);
      assert.ok(Buffer.byteLength(content) > PIECE_BYTES, 'in pieces');
      const messages = [{ role: 'user' as const, content }];
      const chat = await raw(sim.url, '/v1/chat/completions', { model: 'chatload-sim', messages, max_tokens: 2 });
      assert.equal(chat.status, 200, chat.body.slice(0, 300));
      assert.equal((JSON.parse(chat.body) as { usage: { prompt_tokens: number } }).usage.prompt_tokens, encodePrompt(defaultTokenCounter, messages).length);
      const completion = await raw(sim.url, '/v1/completions', { model: 'chatload-sim', prompt: content, max_tokens: 2 });
      assert.equal(completion.status, 200, completion.body.slice(0, 300));
      assert.equal((JSON.parse(completion.body) as { usage: { prompt_tokens: number } }).usage.prompt_tokens, approxTokenizer.encode(content).length);
    });

    test('a bad field beside a large content is the same 400 as in a small body', { timeout: 60_000 }, async () => {
      for (const content of ['short', 'word '.repeat(WORKER_PARSE_BYTES / 4)]) {
        const res = await raw(sim.url, '/v1/chat/completions', { model: 'chatload-sim', messages: [{ role: 'user', content }, { role: 'robot', content }], max_tokens: 2 });
        assert.equal(res.status, 400);
        assert.equal((JSON.parse(res.body) as { error: { message: string } }).error.message, 'messages[1].role must be one of system, user, assistant, tool; got "robot"');
      }
    });
  });
});
