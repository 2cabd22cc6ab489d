import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OUTPUT_CHUNK_SIZE, OutputPump } from '../../src/sim/output-pump.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('OutputPump (a step\'s outputs in chunks of 128, yielding between chunks)', () => {
  test('runs every write in order, at most one chunk per event-loop turn, so other work runs in between', { timeout: 10_000 }, async () => {
    const pump = new OutputPump();
    const order: number[] = [];
    const total = OUTPUT_CHUNK_SIZE * 2 + 44;
    for (let i = 0; i < total; i++) pump.push(() => order.push(i));
    assert.equal(order.length, 0, 'nothing is written in the pushing turn');
    const seen: number[] = [];
    // An immediate queued now runs after the pump's first chunk; each later one after the next chunk.
    for (let turn = 0; turn < 4; turn++) {
      await nextTurn();
      seen.push(order.length);
    }
    assert.deepEqual(seen, [OUTPUT_CHUNK_SIZE, OUTPUT_CHUNK_SIZE * 2, total, total]);
    assert.deepEqual(order, Array.from({ length: total }, (_, i) => i));
  });

  test('a write that throws does not drop the others, and the pump keeps working afterwards', { timeout: 10_000 }, async () => {
    const pump = new OutputPump();
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const done: string[] = [];
      pump.push(() => done.push('a'));
      pump.push(() => {
        throw new Error('socket gone');
      });
      pump.push(() => done.push('c'));
      await nextTurn();
      pump.push(() => done.push('d'));
      await nextTurn();
      await nextTurn();
      assert.deepEqual(done, ['a', 'c', 'd']);
      assert.ok(warnings.some((w) => w.includes('socket gone')));
    } finally {
      process.off('warning', onWarning);
    }
  });
});
