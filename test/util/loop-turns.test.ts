// letLoopGo (src/util/loop-turns.ts): the slices of concurrent long jobs share one budget per turn of the event
// loop (issue #14). No timing is asserted: slices made longer than the budget by construction must each get a turn
// of their own, in FIFO order, and every job must finish.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { letLoopGo } from '../../src/util/loop-turns.js';

/** Holds the thread for `ms` (longer than the per-turn budget, 1 ms). */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Counts turns of the event loop: a setImmediate that re-arms itself runs once per turn. */
function turnCounter(): { readonly turn: number; stop(): void } {
  let turn = 0;
  let stopped = false;
  const tick = (): void => {
    turn += 1;
    if (!stopped) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turn() {
      return turn;
    },
    stop: () => {
      stopped = true;
    },
  };
}

test('slices longer than the turn budget go one per turn, in the order they asked, and every job ends', { timeout: 30_000 }, async () => {
  const turns = turnCounter();
  const ran: Array<{ job: string; slice: number; turn: number }> = [];
  const job = async (name: string): Promise<void> => {
    for (let slice = 0; slice < 4; slice++) {
      await letLoopGo();
      ran.push({ job: name, slice, turn: turns.turn });
      spin(3);
    }
  };
  await Promise.all([job('a'), job('b'), job('c')]);
  turns.stop();
  assert.equal(ran.length, 12);
  // Round robin: each job's next slice waits behind the others' current ones.
  assert.deepEqual(
    ran.map((r) => `${r.job}${r.slice}`),
    ['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'b2', 'c2', 'a3', 'b3', 'c3'],
  );
  // Each over-budget slice had a turn of its own: the loop turned (timers, sockets, this counter) between any two.
  for (let i = 1; i < ran.length; i++) assert.ok(ran[i]!.turn > ran[i - 1]!.turn, `slice ${i} ran in the same turn as slice ${i - 1}`);
});

test('a slice asked for during a turn waits for a later turn; a lone job goes on every turn', { timeout: 30_000 }, async () => {
  const turns = turnCounter();
  const seen: number[] = [];
  for (let i = 0; i < 5; i++) {
    await letLoopGo();
    seen.push(turns.turn);
  }
  turns.stop();
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, 'each letLoopGo resolves on a later turn');
});
