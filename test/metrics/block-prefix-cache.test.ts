import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BlockPrefixCache } from '../../src/metrics/block-prefix-cache.js';

describe('the theoretical prefix cache over hash ids', () => {
  test('hits are the leading full blocks seen before: a prefix match, never a block in the middle', () => {
    const cache = new BlockPrefixCache();
    assert.equal(cache.access([1, 2, 3], 3), 0);
    assert.equal(cache.access([1, 2, 4], 3), 2);
    assert.equal(cache.access([9, 2, 3], 3), 0, 'id 2 after 9 is another block than id 2 after 1');
    assert.equal(cache.access([1, 2, 3, 4], 4), 3);
  });

  test('a trailing partial block is never cached', () => {
    const cache = new BlockPrefixCache();
    assert.equal(cache.access([1, 2, 3], 2), 0);
    assert.equal(cache.access([1, 2, 3], 3), 2, 'block 3 was partial the first time');
    assert.equal(cache.access([1, 2, 3], 3), 3);
  });

  test('with a capacity, least recently used blocks go first, a request tail before its head', () => {
    const cache = new BlockPrefixCache(4);
    cache.access([1, 2, 3], 3); // LRU order: 3, 2, 1
    cache.access([7, 8], 2); // 3 is evicted: 2, 1, 8, 7
    assert.equal(cache.size, 4);
    assert.equal(cache.access([1, 2, 3], 3), 2, 'the head 1, 2 stayed, the tail 3 went');
    // Caching 3 again evicted the oldest, 8 (the tail of [7, 8]), and kept its head 7.
    assert.equal(cache.access([7, 8], 2), 1);
  });
});
