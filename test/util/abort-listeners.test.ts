import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onAbort } from '../../src/util/abort-listeners.js';

test('onAbort: each callback runs once, in the order added, and one removed before the abort does not run', () => {
  const controller = new AbortController();
  const calls: string[] = [];
  onAbort(controller.signal, () => calls.push('a'));
  const removeB = onAbort(controller.signal, () => calls.push('b'));
  onAbort(controller.signal, () => calls.push('c'));
  removeB();
  controller.abort();
  controller.abort(); // a second abort dispatches nothing
  assert.deepEqual(calls, ['a', 'c']);
});

test('onAbort: the same callback added twice runs once, as with addEventListener', () => {
  const controller = new AbortController();
  let calls = 0;
  const callback = (): void => {
    calls += 1;
  };
  onAbort(controller.signal, callback);
  onAbort(controller.signal, callback);
  controller.abort();
  assert.equal(calls, 1);
});

test('onAbort: during the abort, a callback removed by an earlier one does not run, and one added does not either', () => {
  const controller = new AbortController();
  const calls: string[] = [];
  let removeC = (): void => {};
  onAbort(controller.signal, () => {
    calls.push('a');
    removeC();
    onAbort(controller.signal, () => calls.push('added during the abort'));
  });
  onAbort(controller.signal, () => calls.push('b'));
  removeC = onAbort(controller.signal, () => calls.push('c'));
  controller.abort();
  assert.deepEqual(calls, ['a', 'b']);
});

test('onAbort: nothing runs for a signal that had already aborted (check signal.aborted first), and removing is harmless', () => {
  const signal = AbortSignal.abort();
  let called = false;
  const remove = onAbort(signal, () => {
    called = true;
  });
  remove();
  remove();
  assert.equal(called, false);
});

test('onAbort: signals are independent, and a callback that throws lets the others run, its error then thrown', () => {
  const first = new AbortController();
  const second = new AbortController();
  const calls: string[] = [];
  onAbort(first.signal, () => calls.push('first'));
  onAbort(second.signal, () => {
    throw new Error('boom');
  });
  onAbort(second.signal, () => calls.push('second, after the throw'));
  first.abort();
  assert.deepEqual(calls, ['first']);
  // EventTarget reports a listener's error as uncaught, after the dispatch: captured here (before the test runner's
  // own handler sees it) to check that it is the callback's error.
  const uncaught = new Promise<unknown>((resolve) =>
    process.setUncaughtExceptionCaptureCallback((error) => {
      process.setUncaughtExceptionCaptureCallback(null);
      resolve(error);
    }),
  );
  second.abort();
  assert.deepEqual(calls, ['first', 'second, after the throw']);
  return uncaught.then((error) => assert.equal((error as Error).message, 'boom'));
});

test('onAbort: 10,000 callbacks on one signal, added and removed, and the survivors all run', () => {
  const controller = new AbortController();
  const removers: Array<() => void> = [];
  let ran = 0;
  for (let i = 0; i < 10_000; i++) removers.push(onAbort(controller.signal, () => (ran += 1)));
  for (let i = 0; i < 10_000; i += 2) removers[i]!();
  controller.abort();
  assert.equal(ran, 5_000);
});
