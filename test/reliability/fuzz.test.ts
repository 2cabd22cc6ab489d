// Property tests (fast-check) for what reads outside input:
// - the conversation loaders (JSON list, JSONL, ShareGPT, generation configs): any text, bytes or JSON value gives
//   conversations or a one-line DatasetError/ConfigError, never another exception; and near-valid documents (a valid
//   dataset or generation config with arbitrary JSON mixed in) likewise.
// - the SSE reader and the response collector: a valid OpenAI stream gives the same result however its bytes are
//   split (inside UTF-8 characters and CRLFs included); arbitrary bytes never throw.
// - the client's whole read path (socket → undici → SseReader → ResponseCollector) on arbitrary response bytes:
//   send() never rejects and every failure has a kind of the taxonomy. test/client/sse-reader.test.ts fuzzes the
//   SseReader alone (never throws, split-invariant, agrees with eventsource-parser).
// The option parser is fuzzed in test/options/fuzz-options.test.ts.
// Runs are kept small (numRuns 100-300, inputs of at most a few hundred bytes): the whole file takes a few seconds.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ChatClient } from '../../src/client/chat-client.js';
import { ResponseCollector } from '../../src/client/response-collector.js';
import { SseReader } from '../../src/client/sse-reader.js';
import type { StreamResult } from '../../src/client/types.js';
import { loadConversations } from '../../src/conversation/load.js';
import { ERROR_KINDS } from '../../src/metrics/error-kinds.js';
import { chatRequest } from '../helpers/client-test-utils.js';
import { startRawServer } from '../helpers/raw-server.js';
import { loadOrOneLineError as loadOrError } from '../helpers/load-or-error.js';
import { tempDir } from '../helpers/tmp.js';
import { splitAt } from '../helpers/split-bytes.js';

const dir = tempDir('fuzz');
/** Loads `content` as a file with `extension`: 'ok' or the one-line error (test/helpers/load-or-error.ts). */
const loadOrOneLineError = (content: string | Uint8Array, extension: '.json' | '.jsonl', bounds?: { totalTokens: number }): Promise<string> =>
  loadOrError(dir, content, extension, { bounds });

const message = fc.record({ role: fc.constantFrom('user', 'assistant', 'system', 'tool', ''), content: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) });
const conversation = fc.record(
  { id: fc.oneof(fc.string(), fc.integer()), messages: fc.oneof(fc.array(message, { maxLength: 5 }), fc.jsonValue()) },
  { requiredKeys: [] },
);
/** Datasets near the valid shape, with anything JSON can hold mixed in (`__proto__` keys included). */
const nearDataset = fc.array(fc.oneof({ weight: 4, arbitrary: conversation }, { weight: 1, arbitrary: fc.jsonValue() }), { maxLength: 4 });

/** Distributions: mostly valid small ones, else known names with arbitrary (huge, negative, odd) numbers, or any JSON. */
const validDistribution = fc.oneof(
  fc.integer({ min: 0, max: 40 }).map((value) => ({ distribution: 'constant', value })),
  fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 20 })).map(([a, b]) => ({ distribution: 'uniform', min: Math.min(a, b), max: Math.max(a, b) })),
  fc.integer({ min: 1, max: 30 }).map((average) => ({ distribution: 'lognormal', average, max: 60 })),
);
const wildDistribution = fc.record(
  {
    distribution: fc.constantFrom('constant', 'uniform', 'zipf', 'poisson', 'lognormal', 'exponential', 'gaussian'),
    value: fc.oneof(fc.integer({ min: -100, max: 100 }), fc.double(), fc.constant(1e12)),
    min: fc.integer({ min: -10, max: 50 }),
    max: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.constant(1e9)),
    alpha: fc.oneof(fc.double({ min: 0, max: 5, noNaN: true }), fc.constant(1e12)),
    average: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.constant(1e10)),
    mean: fc.double({ min: -5, max: 30, noNaN: true }),
    sigma: fc.double({ min: 0, max: 3, noNaN: true }),
  },
  { requiredKeys: ['distribution'] },
);
const distribution = fc.oneof({ weight: 6, arbitrary: validDistribution }, { weight: 2, arbitrary: wildDistribution }, { weight: 1, arbitrary: fc.jsonValue() });
/** Generation configs near the valid shape (often valid): every field a near-valid distribution or arbitrary JSON. */
const nearConfig = fc.record(
  {
    filetype: fc.constant('generate_conversations'),
    num_conversations: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 3 }) }, { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, 2e6) }, { weight: 1, arbitrary: fc.jsonValue() }),
    prompt_input: fc.oneof(
      { weight: 8, arbitrary: fc.record({ num_turns: distribution, num_tokens: distribution, prefix_num_tokens: distribution, common_prefix_num_tokens: distribution }, { requiredKeys: ['num_turns', 'num_tokens'] }) },
      { weight: 1, arbitrary: fc.jsonValue() },
    ),
    prompt_output: fc.oneof({ weight: 8, arbitrary: fc.record({ num_tokens: distribution }) }, { weight: 1, arbitrary: fc.jsonValue() }),
    system_prompt: fc.oneof(fc.string({ maxLength: 20 }), fc.record({ num_tokens: distribution, shared: fc.oneof(fc.boolean(), fc.jsonValue()) }, { requiredKeys: [] }), fc.jsonValue()),
    think_time: distribution,
    text_files: fc.oneof(fc.constant([]), fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 }), fc.jsonValue()),
  },
  { requiredKeys: ['filetype', 'num_conversations', 'prompt_input', 'prompt_output'] },
);
/** Tight bounds, so a valid random config generates in milliseconds. */
const FUZZ_BOUNDS = { totalTokens: 5_000, generatedTurns: 40 };

describe('conversation loaders never throw anything but a one-line input error', () => {
  test('arbitrary text as .json and .jsonl', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('.json' as const, '.jsonl' as const), async (text, ext) => {
        await loadOrOneLineError(text, ext);
      }),
      { numRuns: 300 },
    );
  });

  test('arbitrary bytes (invalid UTF-8 too)', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), fc.constantFrom('.json' as const, '.jsonl' as const), async (bytes, ext) => {
        await loadOrOneLineError(bytes, ext);
      }),
      { numRuns: 200 },
    );
  });

  test('near-valid datasets as a JSON list and as JSONL', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(nearDataset, async (items) => {
        await loadOrOneLineError(JSON.stringify(items), '.json');
        await loadOrOneLineError(items.map((item) => JSON.stringify(item) ?? 'null').join('\n'), '.jsonl');
      }),
      { numRuns: 300 },
    );
  });

  test('arbitrary JSON values (lists, objects, ShareGPT-like items) as .json and .jsonl', { timeout: 60_000 }, async () => {
    const sharegptish = fc.record({ id: fc.jsonValue(), conversations: fc.array(fc.record({ from: fc.constantFrom('human', 'gpt', 'system', 'x'), value: fc.jsonValue() }, { requiredKeys: [] }), { maxLength: 4 }) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.array(sharegptish, { maxLength: 3 }), fc.array(fc.jsonValue(), { maxLength: 3 })), async (value) => {
        await loadOrOneLineError(JSON.stringify(value) ?? 'null', '.json');
        await loadOrOneLineError(Array.isArray(value) ? value.map((item) => JSON.stringify(item) ?? 'null').join('\n') : JSON.stringify(value) ?? 'null', '.jsonl');
      }),
      { numRuns: 200 },
    );
  });

  test('near-valid generation configs: generated conversations or a one-line ConfigError, in bounded time', { timeout: 60_000 }, async () => {
    let generated = 0;
    await fc.assert(
      fc.asyncProperty(nearConfig, async (config) => {
        if ((await loadOrOneLineError(JSON.stringify(config), '.json', FUZZ_BOUNDS)) === 'ok') generated += 1;
      }),
      { numRuns: 300 },
    );
    assert.ok(generated > 0, 'some configs were valid and generated');
  });

  test('valid datasets load, and what loads is data: content is never evaluated and nothing is polluted', { timeout: 30_000 }, async () => {
    const nasty = ['${process.exit(3)}', '`${1+1}`', '__proto__', '{{7*7}}', "'); process.exit(4); //", '<script>alert(1)</script>'];
    const items = [
      { id: '__proto__', messages: nasty.flatMap((text) => [{ role: 'user', content: text }, { role: 'assistant', content: text }]) },
      JSON.parse('{"id": "constructor", "__proto__": {"polluted": true}, "messages": [{"role": "user", "content": "hi", "__proto__": {"polluted": true}}]}'),
    ];
    for (const ext of ['.json', '.jsonl'] as const) {
      const text = ext === '.json' ? JSON.stringify(items) : items.map((item) => JSON.stringify(item)).join('\n');
      const path = join(dir, `nasty${ext}`);
      writeFileSync(path, text);
      const loaded = await loadConversations(path);
      assert.deepEqual(loaded.map((c) => c.id), ['__proto__', 'constructor']);
      assert.deepEqual(loaded[0]!.messages.map((m) => m.content), nasty.flatMap((t) => [t, t]));
      assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
      assert.equal((loaded[1]!.messages[0] as unknown as Record<string, unknown>).polluted, undefined);
    }
  });
});

/** What a StreamResult says, times left out (they are the read indices, which a split changes). */
function outcome(result: StreamResult): unknown {
  return {
    content: result.content,
    reasoning: result.reasoning,
    numTokenChunks: result.numTokenChunks,
    usage: result.usage,
    finishReason: result.finishReason,
    error: result.error?.kind,
    firstTokenChunkText: result.firstTokenChunkText,
  };
}

/** Reads `pieces` (read i arrives at time i) with an SseReader into a collector, as the client's SseBody (client/read-body.ts) does; ends the body. */
function collect(pieces: readonly Uint8Array[]): StreamResult {
  const collector = new ResponseCollector(0, ['sk-secret']);
  const reader = new SseReader(collector.onSseEvent, { maxEventChars: 1_000 });
  pieces.forEach((piece, i) => {
    if (!collector.finished) reader.push(piece, i + 1);
    if (reader.overflowed && !collector.finished) collector.fail({ kind: 'other', message: 'event too long' }, i + 1);
  });
  reader.end(pieces.length + 1);
  if (!collector.finished) collector.fail({ kind: 'truncated_stream', message: 'no [DONE]' }, pieces.length + 1);
  return collector.result;
}


describe('the SSE reader and collector on split and arbitrary bytes', () => {
  /** Valid OpenAI streams: content and reasoning deltas (any Unicode), empty-choice chunks, comments, usage, [DONE]. */
  const event = fc.oneof(
    fc.record({ content: fc.string({ unit: 'grapheme', maxLength: 8 }) }).map(({ content }) => ({ choices: [{ index: 0, delta: { content } }] })),
    fc.record({ reasoning: fc.string({ unit: 'grapheme', maxLength: 8 }) }).map(({ reasoning }) => ({ choices: [{ index: 0, delta: { reasoning_content: reasoning } }] })),
    fc.constant({ choices: [] }),
    fc.constant({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    fc.nat({ max: 999 }).map((n) => ({ choices: [], usage: { prompt_tokens: n, completion_tokens: n + 1 } })),
  );
  const validStream = fc
    .tuple(fc.array(event, { maxLength: 10 }), fc.constantFrom('\n', '\r\n', '\r'), fc.boolean())
    .map(([events, eol, comments]) =>
      [...events.map((e) => `${comments ? `: ping${eol}` : ''}data: ${JSON.stringify(e)}${eol}${eol}`), `data: [DONE]${eol}${eol}`].join(''),
    );

  test('a valid stream gives the same result however its bytes are split', () => {
    fc.assert(
      fc.property(validStream, fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
        const bytes = new TextEncoder().encode(text);
        const whole = collect([bytes]);
        assert.deepEqual(outcome(collect(splitAt(bytes, cuts))), outcome(whole));
        assert.deepEqual(outcome(collect(splitAt(bytes, Array.from({ length: bytes.length }, (_, i) => i)))), outcome(whole), 'one byte per read');
        assert.ok(whole.error === undefined || whole.error.kind === 'empty_answer', whole.error?.message);
      }),
      { numRuns: 200 },
    );
  });

  test('arbitrary bytes, split anyhow, never throw, and end in a result or a known kind', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.array(fc.oneof(fc.constantFrom('data: ', 'data: [DONE]\n\n', '\n\n', '\r', ': x\n', '{"choices":[{"delta":{"content":"a"}}]}', '{"error":"e"}'), fc.string({ unit: 'binary', maxLength: 20 })), { maxLength: 15 }).map((parts) => new TextEncoder().encode(parts.join(''))),
    );
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 10 }), (input, cuts) => {
        const result = collect(splitAt(input, cuts));
        if (result.error !== undefined) {
          assert.ok((ERROR_KINDS as readonly string[]).includes(result.error.kind), result.error.kind);
          assert.ok(!/[\r\n]/.test(result.error.message));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('the client read path on arbitrary response bytes', () => {
  test('send() never rejects; a failure has a known kind and a one-line message', { timeout: 60_000 }, async () => {
    const head = fc.constantFrom(
      'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
      'HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\n',
      '',
    );
    const sseish = fc.array(
      fc.oneof(
        fc.constantFrom('data: [DONE]\n\n', 'data: {"choices":[{"delta":{"content":"x"}}]}\n\n', 'data: {"error":{"message":"e"}}\n\n', ': ping\n', '\r\n', 'data:', '\n'),
        fc.string({ unit: 'binary', maxLength: 40 }),
      ),
      { maxLength: 12 },
    );
    let body: Buffer = Buffer.alloc(0);
    const server = await startRawServer((_request, socket) => socket.end(body));
    const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 3_000 });
    try {
      await fc.assert(
        fc.asyncProperty(head, sseish, fc.uint8Array({ maxLength: 64 }), async (h, parts, tail) => {
          body = Buffer.concat([Buffer.from(h + parts.join(''), 'utf8'), Buffer.from(tail)]);
          const result = await client.send(chatRequest());
          if (result.error !== undefined) {
            assert.ok((ERROR_KINDS as readonly string[]).includes(result.error.kind), result.error.kind);
            assert.ok(!/[\r\n]/.test(result.error.message), result.error.message);
          } else {
            assert.ok(result.doneAtMs >= result.sentAtMs);
          }
        }),
        { numRuns: 150 },
      );
    } finally {
      await server.close();
      await client.close();
    }
  });
});
