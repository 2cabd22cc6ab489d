// Large request bodies (issue #14): the simulator parses a body over WORKER_PARSE_BYTES in a worker thread, so a 3 MB
// prompt does not hold its event loop. The value and the errors must be those of the inline JSON.parse.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { JsonSyntaxError, parseJsonInWorker, WORKER_PARSE_BYTES } from '../../src/sim/json-worker.js';
import { placeLargeStrings } from '../../src/sim/large-strings.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { approxTokenizer, defaultTokenCounter, encodePrompt } from '../../src/tokenizer/index.js';
import { raw } from './sim-http.js';

/** A body over the worker threshold with escapes, non-ASCII, surrogate pairs, numbers, nesting and nulls. */
function bigValue(): unknown {
  const words = 'quote " backslash \\ tab \t newline \n é 中文 😀 '.repeat(40_000);
  return { model: 'm', messages: [{ role: 'user', content: words }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }], n: [1, -2.5, 1e21, 0], deep: { a: [{ b: [true, false, null] }] } };
}

function parseError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a syntax error');
}

describe('large request bodies', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny' });
  });
  after(async () => {
    await sim.close();
  });

  test('the worker parses to the same value as JSON.parse, and fails with the same message', { timeout: 20_000 }, async () => {
    const text = JSON.stringify(bigValue());
    assert.ok(Buffer.byteLength(text) > WORKER_PARSE_BYTES);
    // Its large string comes back as UTF-8, put back in place as readJsonBody does (test/sim/large-strings.test.ts).
    const parsed = async (bytes: Uint8Array): Promise<unknown> => {
      const parse = await parseJsonInWorker(bytes);
      assert.equal(parse.large.length, 1);
      return placeLargeStrings(parse.value, parse.large);
    };
    assert.deepEqual(await parsed(Buffer.from(text)), JSON.parse(text));
    // A subarray of a larger buffer is copied, not transferred: the caller's buffer stays whole.
    const padded = Buffer.from(`xx${text}yy`);
    assert.deepEqual(await parsed(padded.subarray(2, padded.length - 2)), JSON.parse(text));
    assert.equal(padded.length, Buffer.byteLength(text) + 4);
    const broken = `${text.slice(0, -1)},`;
    await assert.rejects(parseJsonInWorker(Buffer.from(broken)), (error: unknown) => error instanceof JsonSyntaxError && error.message === parseError(broken));
  });

  test('a prompt over the threshold is read as the inline parse reads it (/tokenize)', { timeout: 30_000 }, async () => {
    const prompt = 'It was the best of times, it was the worst of times. é 😀 '.repeat(25_000);
    const body = { prompt };
    assert.ok(Buffer.byteLength(JSON.stringify(body)) > WORKER_PARSE_BYTES);
    const res = await raw(sim.url, '/tokenize', body);
    assert.equal(res.status, 200, res.body.slice(0, 200));
    assert.deepEqual((JSON.parse(res.body) as { tokens: number[] }).tokens, approxTokenizer.encode(prompt));
    const messages = [{ role: 'user' as const, content: prompt }];
    const chat = await raw(sim.url, '/tokenize', { messages });
    assert.deepEqual((JSON.parse(chat.body) as { tokens: number[] }).tokens, encodePrompt(defaultTokenCounter, messages));
  });

  test('a malformed body over the threshold is the same 400 as a small one', { timeout: 20_000 }, async () => {
    const good = JSON.stringify({ model: 'chatload-sim', messages: [{ role: 'user', content: 'word '.repeat(300_000) }], max_tokens: 4 });
    for (const text of [`${good.slice(0, 40)}`, `${good.slice(0, -2)}]}`]) {
      const res = await raw(sim.url, '/v1/chat/completions', undefined, { method: 'POST', rawBody: text });
      assert.equal(res.status, 400);
      const error = (JSON.parse(res.body) as { error: { message: string; type: string; code: number } }).error;
      assert.deepEqual(error, { message: `Invalid JSON in the request body: ${parseError(text)}`, type: 'BadRequestError', param: null, code: 400 });
    }
  });
});
