import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ArrivalSchedule, sampleGamma } from '../../src/load/arrivals.js';
import { ConcurrencyLimit } from '../../src/load/concurrency-limit.js';
import { Rng } from '../../src/util/rng.js';

function arrivalsWithin(schedule: ArrivalSchedule, horizonMs: number): number[] {
  const out: number[] = [];
  for (let t = schedule.next(); t < horizonMs; t = schedule.next()) out.push(t);
  return out;
}

describe('ArrivalSchedule', () => {
  test('20 sessions/s comes out at 20/s within 3%, for several seeds', () => {
    // Over 600 s (12,000 expected arrivals) the Poisson noise is 0.9%, so 3% is a real bound on the rate, not on luck.
    for (const seed of [0, 1, 2, 3, 4]) {
      const n = arrivalsWithin(new ArrivalSchedule({ ratePerSec: 20, burstiness: 1 }, Rng.derive(seed, 7)), 600_000).length;
      assert.ok(Math.abs(n / 600 - 20) <= 0.6, `seed ${seed}: ${n / 600} sessions/s`);
    }
  });

  test('the same seed gives the same schedule', () => {
    const a = arrivalsWithin(new ArrivalSchedule({ ratePerSec: 5, burstiness: 1 }, Rng.derive(9, 1)), 10_000);
    const b = arrivalsWithin(new ArrivalSchedule({ ratePerSec: 5, burstiness: 1 }, Rng.derive(9, 1)), 10_000);
    assert.deepEqual(a, b);
  });

  test('burstiness is the gamma shape: the squared coefficient of variation of the gaps is 1/shape, the mean 1/rate', () => {
    for (const shape of [0.5, 1, 4]) {
      const schedule = new ArrivalSchedule({ ratePerSec: 10, burstiness: shape }, Rng.derive(3, 3));
      let prev = 0;
      const gaps: number[] = [];
      for (let i = 0; i < 20_000; i++) {
        const t = schedule.next();
        gaps.push(t - prev);
        prev = t;
      }
      const mean = gaps.reduce((a, b) => a + b) / gaps.length;
      const variance = gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length;
      assert.ok(Math.abs(mean - 100) < 3, `shape ${shape}: mean gap ${mean} ms`);
      assert.ok(Math.abs(variance / mean ** 2 - 1 / shape) < 0.1 / shape + 0.03, `shape ${shape}: CV² ${variance / mean ** 2}`);
    }
  });

  test('a linear ramp delivers the ramp\'s area, then the final rate', () => {
    // 0 -> 20/s over 10 s: 100 expected arrivals in the ramp (more in its second half), then 20/s.
    let inRamp = 0;
    let firstHalf = 0;
    let after = 0;
    for (let seed = 0; seed < 20; seed++) {
      const times = arrivalsWithin(new ArrivalSchedule({ ratePerSec: 20, burstiness: 1, rampUp: { startPerSec: 0, seconds: 10 } }, Rng.derive(seed, 5)), 20_000);
      inRamp += times.filter((t) => t < 10_000).length;
      firstHalf += times.filter((t) => t < 5_000).length;
      after += times.filter((t) => t >= 10_000).length;
    }
    assert.ok(Math.abs(inRamp / 20 - 100) < 6, `ramp arrivals ${inRamp / 20}`);
    assert.ok(Math.abs(firstHalf / 20 - 25) < 4, `first half ${firstHalf / 20}`);
    assert.ok(Math.abs(after / 20 - 200) < 9, `after the ramp ${after / 20}`);
  });

  test('sampleGamma has mean = shape', () => {
    const rng = Rng.derive(1, 1);
    for (const shape of [0.3, 2.5]) {
      let sum = 0;
      for (let i = 0; i < 20_000; i++) sum += sampleGamma(rng, shape);
      assert.ok(Math.abs(sum / 20_000 - shape) < 0.05 * shape + 0.01, `shape ${shape}: mean ${sum / 20_000}`);
    }
  });
});

describe('ConcurrencyLimit', () => {
  test('hands slots out first come, first served, and reports the wait', async () => {
    const limit = new ConcurrencyLimit(1);
    const signal = new AbortController().signal;
    assert.equal(await limit.acquire(signal), 0);
    const order: number[] = [];
    const second = limit.acquire(signal).then((ms) => order.push(2) && ms);
    const third = limit.acquire(signal).then((ms) => order.push(3) && ms);
    assert.equal(limit.waiting, 2);
    await new Promise((r) => setTimeout(r, 20));
    limit.release();
    const waited = await second;
    assert.ok(typeof waited === 'number' && waited >= 15, `waited ${waited}`);
    limit.release();
    await third;
    assert.deepEqual(order, [2, 3]);
  });

  test('--max-queue: full once no slot is free and the queue holds its bound; a waiter that gave up leaves room', async () => {
    const limit = new ConcurrencyLimit(1, 1);
    const stop = new AbortController();
    assert.equal(limit.full, false);
    await limit.acquire(stop.signal);
    assert.equal(limit.full, false, 'no slot free, but the queue has room for one');
    const waiting = limit.acquire(stop.signal);
    assert.equal(limit.waiting, 1);
    assert.equal(limit.full, true);
    stop.abort();
    assert.equal(await waiting, null);
    assert.equal(limit.waiting, 0, 'the waiter that gave up no longer counts');
    assert.equal(limit.full, false);
    limit.release();
    assert.equal(new ConcurrencyLimit(1, 0).full, false, 'a free slot is taken whatever the bound');
  });

  test('a stop releases the waiters without giving them a slot', async () => {
    const limit = new ConcurrencyLimit(1);
    const stop = new AbortController();
    await limit.acquire(stop.signal);
    const waiting = limit.acquire(stop.signal);
    stop.abort();
    assert.equal(await waiting, null);
    limit.release();
    assert.equal(await limit.acquire(new AbortController().signal), 0, 'the slot went back to the pool');
  });
});
