import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeLoadModel, loadModelFor } from '../../src/load/executors/registry.js';
import type { LoadPlan } from '../../src/options/run-plan.js';

const base: LoadPlan = {
  model: { type: 'fixed-clients', numClients: 4, maxActiveConversations: 8, sampling: 'round_robin', requestRatePerSec: 0, earlyStop: true },
  trace: { speed: 1 },
  clients: 4,
  warmupStep: false,
  seed: 1,
  peakConcurrency: 4,
  connections: 4,
};

// The executors' registry (load/executors/registry.ts): a plan's load model split between parts, and checked.
describe('load model registry', () => {
  test("each part gets its share: 4 clients over 3 parts are 2, 1, 1; a trace's cap and queue too", () => {
    const shares = [0, 1, 2].map((index) => loadModelFor(base, 100, { index, count: 3 }));
    assert.deepEqual(shares.map((m) => (m.type === 'fixed-clients' ? m.config.numClients : -1)), [2, 1, 1]);
    const traced = loadModelFor({ ...base, trace: { speed: 2, maxConcurrency: 5 }, maxQueue: 3 }, 100, { index: 1, count: 2 }, true);
    assert.equal(traced.type, 'fixed-schedule');
    assert.equal(describeLoadModel(traced), "fixed-schedule: the trace's timestamps at 2x speed, at most 2 requests in flight, 1 queued at most (more dropped)");
  });

  test("a library caller's impossible plan is refused with every problem named", () => {
    const open: LoadPlan = { ...base, model: { type: 'open-sessions', arrivals: { ratePerSec: -1, burstiness: 0 } }, maxQueue: 2 };
    assert.throws(() => loadModelFor(open, 10), (error: Error) => {
      assert.match(error.message, /invalid load model \(open-sessions\)/);
      assert.match(error.message, /ratePerSec: expected a finite number > 0, got -1/);
      assert.match(error.message, /burstiness: expected a finite number > 0, got 0/);
      assert.match(error.message, /maxQueue: bounds the wait for a maxConcurrency slot/);
      return true;
    });
    assert.throws(() => loadModelFor({ ...base, trace: { speed: 0 } }, 10, undefined, true), /speed: expected a finite number > 0, got 0/);
  });
});
