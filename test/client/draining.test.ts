// The pool's drained responses (issue #35, item 4): a request that would find every connection taken by responses
// still being drained after their [DONE] cuts the oldest of them first, instead of waiting behind it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Dispatcher } from 'undici';
import { DrainingResponses } from '../../src/client/draining.js';
import { Exchange } from '../../src/client/exchange.js';

/** A real Exchange brought to the draining state, as after [DONE]; `aborted` says whether its connection was cut. */
function drainedExchange(draining: DrainingResponses, name: string, cut: string[]): Exchange {
  const exchange = new Exchange(
    () => ({ data: () => {}, end: () => {}, error: () => {} }),
    () => {},
    draining.track,
  );
  const controller = { abort: () => cut.push(name), pause: () => {}, resume: () => {}, paused: false } as unknown as Dispatcher.DispatchController;
  exchange.onRequestStart(controller);
  exchange.onResponseStart(controller, 200, {});
  exchange.discardRest();
  return exchange;
}

test('a request that finds every connection taken by drained responses cuts the oldest first', () => {
  const draining = new DrainingResponses(3);
  const cut: string[] = [];
  const leaveFirst = draining.enter();
  drainedExchange(draining, 'a', cut);
  drainedExchange(draining, 'b', cut);
  assert.equal(draining.size, 2);
  leaveFirst();
  // One in flight and two drained fill three connections: the next request cuts the oldest drained one.
  const leaveSecond = draining.enter();
  assert.deepEqual(cut, []);
  const leaveThird = draining.enter();
  assert.deepEqual(cut, ['a']);
  assert.equal(draining.size, 1);
  // Leaving twice counts once.
  leaveSecond();
  leaveSecond();
  const leaveFourth = draining.enter();
  assert.deepEqual(cut, ['a'], 'room enough: nothing more is cut');
  leaveThird();
  leaveFourth();
});

test('a drained body that ends on its own leaves the set, and is never cut', () => {
  const draining = new DrainingResponses(1);
  const cut: string[] = [];
  const exchange = drainedExchange(draining, 'a', cut);
  assert.equal(draining.size, 1);
  exchange.onResponseEnd();
  assert.equal(draining.size, 0);
  draining.enter()();
  assert.deepEqual(cut, []);
});

test('closing the client cuts every drained response, so its close does not wait out their grace', () => {
  const draining = new DrainingResponses(4);
  const cut: string[] = [];
  drainedExchange(draining, 'a', cut);
  drainedExchange(draining, 'b', cut);
  draining.cutAll();
  assert.deepEqual(cut, ['a', 'b']);
  assert.equal(draining.size, 0);
});
