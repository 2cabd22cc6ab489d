import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sendableBody } from '../../src/client/request-body.js';

describe('sendableBody', () => {
  test('a body of one Buffer goes as it is, with the headers unchanged', () => {
    const body = Buffer.from('{"messages":[]}');
    const headers = { 'content-type': 'application/json' };
    assert.deepEqual(sendableBody(body, headers), { body, headers });
  });

  test('a chunked body lets the event loop go about every MB as it is read, and each read gives the same bytes (issue #14)', async () => {
    // 10 MB in 256 kB chunks, as a large message's JSON slices are kept.
    const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(256 * 1024, i));
    const whole = Buffer.concat(chunks);
    const { body, headers } = sendableBody(chunks, { 'content-type': 'application/json' });
    assert.equal(headers['content-length'], String(whole.length));
    assert.equal(headers['content-type'], 'application/json');
    assert.ok(typeof body === 'object' && Symbol.asyncIterator in body, 'an async iterable');
    // Read twice, as a stale-connection resend does; an immediate that re-arms itself counts the loop's turns meanwhile.
    for (let read = 1; read <= 2; read++) {
      let turns = 0;
      let counting = true;
      const tick = (): void => {
        if (!counting) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      const got: Buffer[] = [];
      for await (const chunk of body as AsyncIterable<Buffer>) got.push(chunk);
      counting = false;
      assert.ok(Buffer.concat(got).equals(whole), `read ${read}: the same bytes in the same order`);
      // An array read by for-await only waits on microtasks: the loop would not turn at all.
      assert.ok(turns >= 9, `read ${read}: the loop turned ${turns} times while 10 MB were read`);
    }
  });
});
