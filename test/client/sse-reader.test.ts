import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createParser } from 'eventsource-parser';
import { SseReader } from '../../src/client/sse-reader.js';
import { splitAt } from '../helpers/split-bytes.js';

const encoder = new TextEncoder();

interface Seen {
  data: string;
  atMs: number;
}

/** Feeds `parts` (strings or bytes) to a reader, read i arriving at time i, and returns the events and the reader. */
function run(parts: ReadonlyArray<string | Uint8Array>, end = true): { events: Seen[]; reader: SseReader } {
  const events: Seen[] = [];
  const reader = new SseReader((data, atMs) => events.push({ data, atMs }));
  parts.forEach((part, i) => reader.push(typeof part === 'string' ? encoder.encode(part) : part, i));
  if (end) reader.end(parts.length);
  return { events, reader };
}

function datas(parts: ReadonlyArray<string | Uint8Array>, end = true): string[] {
  return run(parts, end).events.map((event) => event.data);
}


describe('SseReader', () => {
  test('dispatches one event per blank line, with the time of the read that completed it', () => {
    const { events } = run(['data: {"a":1}\n\ndata: {"a":2}\n', '\n']);
    assert.deepEqual(events, [
      { data: '{"a":1}', atMs: 0 },
      { data: '{"a":2}', atMs: 1 },
    ]);
  });

  test('joins a data line split across reads', () => {
    assert.deepEqual(datas(['da', 'ta: hel', 'lo\n', '\n']), ['hello']);
  });

  test('joins a UTF-8 character split across reads', () => {
    const bytes = encoder.encode('data: h€llo 🦜\n\n');
    const euro = 'data: h'.length + 1; // inside the 3-byte euro sign
    const parrot = bytes.length - 4; // inside the 4-byte emoji
    assert.deepEqual(datas([bytes.subarray(0, euro), bytes.subarray(euro, parrot), bytes.subarray(parrot)]), ['h€llo 🦜']);
  });

  test('accepts CRLF, LF and lone CR line endings, including a CRLF split between reads', () => {
    assert.deepEqual(datas(['data: a\r\n\r\ndata: b\n\ndata: c\r\rdata: d\r', '\n\r', '\n']), ['a', 'b', 'c', 'd']);
  });

  test('skips comments and ignores event, id and retry fields', () => {
    assert.deepEqual(datas([': ping\n\nevent: message\nid: 7\nretry: 100\ndata: x\n\n:\n\n']), ['x']);
  });

  test('joins multi-line data with \\n and keeps data without a space after the colon', () => {
    assert.deepEqual(datas(['data: one\ndata:two\ndata\ndata:  three\n\n']), ['one\ntwo\n\n three']);
  });

  test('passes [DONE] through as data', () => {
    assert.deepEqual(datas(['data: [DONE]\n\n']), ['[DONE]']);
  });

  test('at the end, dispatches terminated data lines and discards an unterminated line', () => {
    assert.deepEqual(datas(['data: [DONE]\n']), ['[DONE]']);
    const { events, reader } = run(['data: {"a":1}\n\ndata: {"trunc'], false);
    assert.equal(reader.hasPartialLine, true);
    reader.end(9);
    assert.deepEqual(events.map((event) => event.data), ['{"a":1}']);
  });

  test('strips a leading byte order mark', () => {
    assert.deepEqual(datas(['\uFEFFdata: x\n\n']), ['x']);
  });

  test('stop() ignores the rest of the read and later reads', () => {
    const seen: string[] = [];
    const reader = new SseReader((data) => {
      seen.push(data);
      reader.stop();
    });
    reader.push(encoder.encode('data: 1\n\ndata: 2\n\n'), 0);
    reader.push(encoder.encode('data: 3\n\n'), 1);
    assert.deepEqual(seen, ['1']);
  });

  test('sets overflowed instead of growing past maxEventChars', () => {
    const reader = new SseReader(() => assert.fail('no event expected'), { maxEventChars: 100 });
    for (let i = 0; i < 10; i++) reader.push(encoder.encode('data: 0123456789abcdef'), i);
    assert.equal(reader.overflowed, true);
    reader.push(encoder.encode('\n\n'), 11);
    reader.end(12);
  });
});

// Fragments that exercise the grammar, mixed with arbitrary bytes.
const fragment = fc.oneof(
  fc.constantFrom('data:', 'data: ', 'data', ':', ': ping', 'event: x', 'id: 1', 'retry: 5', '[DONE]', '{"a":1}', '€', '🦜', 'é'),
  fc.constantFrom('\n', '\r', '\r\n', '\n\n', '\r\n\r\n'),
  fc.string({ maxLength: 6 }),
);
const fragmentBytes = fc.oneof(
  fc.array(fragment, { maxLength: 40 }).map((parts) => encoder.encode(parts.join(''))),
  fc.uint8Array({ maxLength: 200 }),
  fc
    .tuple(fc.array(fragment, { maxLength: 20 }), fc.uint8Array({ maxLength: 20 }))
    .map(([parts, raw]) => new Uint8Array([...encoder.encode(parts.join('')), ...raw])),
);

describe('SseReader properties (fast-check)', () => {
  test('never throws and gives the same events however the bytes are split', { timeout: 20_000 }, () => {
    fc.assert(
      fc.property(fragmentBytes, fc.array(fc.nat(), { maxLength: 12 }), (bytes, cuts) => {
        const whole = datas([bytes]);
        const pieces = datas(splitAt(bytes, cuts));
        assert.deepEqual(pieces, whole);
        const byteByByte = datas(Array.from(bytes, (byte) => Uint8Array.of(byte)));
        assert.deepEqual(byteByByte, whole);
      }),
      { numRuns: 1500 },
    );
  });

  test('agrees with eventsource-parser on streams that end with a blank line', { timeout: 20_000 }, () => {
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 40 }), (parts) => {
        const text = `${parts.join('')}\n\n`;
        const expected: string[] = [];
        const parser = createParser({ onEvent: (event) => expected.push(event.data) });
        parser.feed(text);
        assert.deepEqual(datas([text], false), expected);
      }),
      { numRuns: 1500 },
    );
  });
});
