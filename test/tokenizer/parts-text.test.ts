import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/util/rng.js';
import { PartsText } from '../../src/tokenizer/parts-text.js';

test('PartsText: slice and sub read the parts as their concatenation, at every boundary', () => {
  const rng = new Rng(3);
  for (let round = 0; round < 200; round++) {
    const parts = Array.from({ length: rng.int(0, 6) }, () => 'abcdefghij'.slice(0, rng.int(0, 10)) + (rng.chance(0.3) ? '🙂' : ''));
    const whole = parts.join('');
    const text = new PartsText(parts);
    assert.equal(text.length, whole.length);
    for (let k = 0; k < 20; k++) {
      const from = rng.int(0, whole.length);
      const to = rng.int(from, whole.length + 3);
      assert.equal(text.slice(from, to), whole.slice(from, to), `${JSON.stringify(parts)} [${from}, ${to})`);
      const sub = text.sub(from, to);
      assert.equal(sub.parts.join(''), whole.slice(from, to));
      assert.ok(sub.parts.every((p) => p.length > 0), 'no empty part');
      assert.equal(sub.slice(0), whole.slice(from, to));
    }
    assert.equal(text.slice(0), whole);
  }
});
