import assert from 'node:assert/strict';
import type { LoadResult } from '../../src/load/index.js';

/** Every conversation is accounted for once: the engine's counts add up to the dataset's size. */
export function assertCountsAddUp(engine: LoadResult, total: number): void {
  const c = engine.conversations;
  assert.equal(c.total, total);
  assert.equal(c.completed + c.failed + c.dropped + c.unfinished + c.not_started, total, JSON.stringify(c));
}

/** An AbortController that aborts once `after` records have ended, and the performance.now() when it did. */
export function abortAfterRecords(after: number): { controller: AbortController; onRecord: () => void; abortedAt: () => number } {
  const controller = new AbortController();
  let seen = 0;
  let at = Number.NaN;
  return {
    controller,
    onRecord: () => {
      seen += 1;
      if (seen === after) {
        at = performance.now();
        controller.abort();
      }
    },
    abortedAt: () => at,
  };
}
