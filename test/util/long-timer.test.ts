// Waits longer than setTimeout holds (2^31 - 1 ms, ~24.8 days) wait, and stay cancellable (issue #35, item 3): a
// longer setTimeout fires after 1 ms with a TimeoutOverflowWarning, which made a 30-day Retry-After retry at once and
// a long --request-timeout-sec or --benchmark-timeout-sec cut every request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sleep } from '../../src/load/sleep.js';
import { MAX_TIMER_MS, setLongTimeout } from '../../src/util/long-timer.js';
import { chatRequest, withScriptedClient } from '../helpers/client-test-utils.js';
import { SHORT_ANSWER } from '../helpers/scripted-server.js';

const THIRTY_DAYS_MS = 30 * 24 * 3600 * 1000;

describe('waits past setTimeout\'s limit', () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning.name);
  before(() => process.on('warning', onWarning));
  after(() => process.off('warning', onWarning));

  test('setLongTimeout: 30 days do not fire within 100 ms, clear() cancels, a short one fires', async () => {
    assert.ok(THIRTY_DAYS_MS > MAX_TIMER_MS);
    let fired = false;
    const long = setLongTimeout(() => (fired = true), THIRTY_DAYS_MS);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(fired, false, 'a 30-day timer fired at once');
    long.clear();
    const short = await new Promise<boolean>((resolve) => setLongTimeout(() => resolve(true), 5));
    assert.equal(short, true);
    assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
  });

  test('sleep: 30 days stay asleep, and the stop signal ends them at once', async () => {
    const stop = new AbortController();
    let woke: boolean | undefined;
    const sleeping = sleep(THIRTY_DAYS_MS, stop.signal).then((full) => (woke = full));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(woke, undefined, 'a 30-day sleep ended at once');
    stop.abort();
    assert.equal(await sleeping, false);
    assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
  });

  test('a request with a 30-day timeout is answered, not timed out at once', { timeout: 20_000 }, async () => {
    await withScriptedClient(SHORT_ANSWER, { requestTimeoutMs: THIRTY_DAYS_MS, ttftTimeoutMs: THIRTY_DAYS_MS }, async (client) => {
      const results = await Promise.all([1, 2, 3].map(() => client.send(chatRequest())));
      for (const r of results) assert.equal(r.error, undefined, JSON.stringify(r.error));
    });
    assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
  });
});
