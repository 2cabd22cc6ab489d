import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/errors/index.js';
import { parseDistribution, parseDistributionFlag, sampleMany, type Distribution } from '../../src/synth/distributions.js';
import { Rng } from '../../src/util/rng.js';

const N = 20_000;

function draw(d: Distribution, seed = 7, n = N): number[] {
  const rng = new Rng(seed);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(d.sample(rng));
  return out;
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function variance(xs: number[]): number {
  const m = mean(xs);
  return xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length;
}

function configError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => error instanceof ConfigError && pattern.test(error.message) && error.exitCode === 2);
}

describe('distributions (fixed seeds)', () => {
  test('constant', () => {
    assert.deepEqual(new Set(draw(parseDistribution({ distribution: 'constant', value: 500 }, 'x'), 1, 100)), new Set([500]));
  });

  test('uniform: inclusive integers when both bounds are integers, floats otherwise', () => {
    const xs = draw(parseDistribution({ distribution: 'uniform', min: 12, max: 18 }, 'x'));
    assert.ok(xs.every((x) => Number.isInteger(x) && x >= 12 && x <= 18));
    assert.deepEqual([...new Set(xs)].sort((a, b) => a - b), [12, 13, 14, 15, 16, 17, 18]);
    assert.ok(Math.abs(mean(xs) - 15) < 0.1);
    const fs = draw(parseDistribution({ distribution: 'uniform', min: 0.5, max: 1.5 }, 'x'));
    assert.ok(fs.every((x) => x >= 0.5 && x < 1.5));
    assert.ok(fs.some((x) => !Number.isInteger(x)));
    assert.ok(Math.abs(mean(fs) - 1) < 0.02);
  });

  test('zipf: P(1) = 1/zeta(alpha), integers >= 1, max caps', () => {
    const xs = draw(parseDistribution({ distribution: 'zipf', alpha: 2 }, 'x'));
    assert.ok(xs.every((x) => Number.isInteger(x) && x >= 1));
    const p1 = xs.filter((x) => x === 1).length / xs.length;
    assert.ok(Math.abs(p1 - 6 / Math.PI ** 2) < 0.015, `P(1) = ${p1}`);
    const capped = draw(parseDistribution({ distribution: 'zipf', alpha: 1.5, max: 20 }, 'x'));
    assert.equal(Math.max(...capped), 20);
    assert.ok(capped.filter((x) => x === 20).length > 0);
  });

  test('poisson: mean and variance equal lambda, small and large lambda', () => {
    for (const lambda of [3, 80]) {
      const xs = draw(parseDistribution({ distribution: 'poisson', alpha: lambda }, 'x'));
      assert.ok(xs.every((x) => Number.isInteger(x) && x >= 0));
      assert.ok(Math.abs(mean(xs) - lambda) < lambda * 0.03, `mean ${mean(xs)} for ${lambda}`);
      assert.ok(Math.abs(variance(xs) - lambda) < lambda * 0.08, `variance ${variance(xs)} for ${lambda}`);
    }
    assert.ok(draw(parseDistribution({ distribution: 'poisson', alpha: 10, max: 8 }, 'x')).every((x) => x <= 8));
  });

  test('lognormal average form: each batch has exactly the average (before rounding), the median near average*ratio', () => {
    const d = parseDistribution({ distribution: 'lognormal', average: 1000 }, 'x');
    const batch = sampleMany(d, new Rng(3), N);
    assert.ok(batch.every((x) => Number.isInteger(x) && x >= 0));
    assert.ok(Math.abs(mean(batch) - 1000) < 0.5, `batch mean ${mean(batch)}`);
    const sorted = [...batch].sort((a, b) => a - b);
    const median = sorted[N / 2]!;
    assert.ok(Math.abs(median - 850) < 30, `median ${median}`);
    assert.equal(sampleMany(d, new Rng(4), 1)[0], 1000, 'a batch of one is the average itself');
    const capped = sampleMany(parseDistribution({ distribution: 'lognormal', average: 1000, max: 5000 }, 'x'), new Rng(3), N);
    assert.equal(Math.max(...capped), 5000);
  });

  test('lognormal mean/sigma form: the underlying normal parameters', () => {
    const xs = draw(parseDistribution({ distribution: 'lognormal', mean: 3, sigma: 0.5 }, 'x'));
    const logs = xs.map((x) => Math.log(Math.max(x, 1)));
    assert.ok(Math.abs(mean(logs) - 3) < 0.02, `mean of logs ${mean(logs)}`);
    assert.ok(Math.abs(Math.sqrt(variance(logs)) - 0.5) < 0.02);
  });

  test('exponential (extension): mean, floats, cap', () => {
    const xs = draw(parseDistribution({ distribution: 'exponential', mean: 2.5 }, 'x'));
    assert.ok(Math.abs(mean(xs) - 2.5) < 0.08);
    assert.ok(xs.every((x) => x >= 0));
    assert.ok(draw(parseDistribution({ distribution: 'exponential', mean: 2.5, max: 4 }, 'x')).every((x) => x <= 4));
  });

  test('same seed, same samples', () => {
    const d = parseDistribution({ distribution: 'zipf', alpha: 1.3, max: 100 }, 'x');
    assert.deepEqual(draw(d, 11, 50), draw(d, 11, 50));
    assert.notDeepEqual(draw(d, 11, 50), draw(d, 12, 50));
  });

  test('bad objects are ConfigErrors naming where', () => {
    configError(() => parseDistribution({ distribution: 'gauss' }, 'prompt_input.num_tokens'), /^prompt_input\.num_tokens: "distribution" must be one of/);
    configError(() => parseDistribution({ distribution: 'uniform', min: 5 }, 'w'), /"max" is required/);
    configError(() => parseDistribution({ distribution: 'uniform', min: 5, max: 1 }, 'w'), /min <= max/);
    configError(() => parseDistribution({ distribution: 'zipf', alpha: 1 }, 'w'), /alpha" > 1/);
    configError(() => parseDistribution({ distribution: 'lognormal', average: 10, mean: 2, sigma: 1 }, 'w'), /not both/);
    configError(() => parseDistribution({ distribution: 'lognormal', average: 10, median_ratio: 1.5 }, 'w'), /median_ratio/);
    configError(() => parseDistribution({ distribution: 'constant', value: 'a' }, 'w'), /"value" must be a number/);
    configError(() => parseDistribution(5, 'w'), /expected a distribution object/);
  });
});

describe('parseDistributionFlag', () => {
  test('compact forms', () => {
    assert.equal(parseDistributionFlag('constant:5', 'f').describe, 'constant(5)');
    assert.equal(parseDistributionFlag('uniform:1:5', 'f').describe, 'uniform(1, 5)');
    assert.equal(parseDistributionFlag('exponential:2.5', 'f').describe, 'exponential(mean=2.5)');
    assert.equal(parseDistributionFlag('lognormal:average=5,median_ratio=0.85', 'f').describe, 'lognormal(average=5, median_ratio=0.85)');
    assert.equal(parseDistributionFlag('zipf:alpha=1.5,max=20', 'f').describe, 'zipf(alpha=1.5, max=20)');
    assert.equal(parseDistributionFlag('poisson:alpha=3', 'f').describe, 'poisson(alpha=3)');
    assert.equal(parseDistributionFlag('{"distribution": "uniform", "min": 1, "max": 2}', 'f').describe, 'uniform(1, 2)');
  });

  test('bad flags name the flag', () => {
    configError(() => parseDistributionFlag('gauss:1', '--think-time'), /^--think-time: expected NAME:ARGS/);
    configError(() => parseDistributionFlag('uniform:1:x', '--think-time'), /"max" must be a number/);
    configError(() => parseDistributionFlag('constant:1:2', '--think-time'), /too many values/);
    configError(() => parseDistributionFlag('{oops', '--think-time'), /not valid JSON/);
  });
});

describe('zipf at the ends of alpha', () => {
  test('ends: a draw past 2^53 returns the cap (numpy rejects it and loops for ever; found by the fuzz test)', () => {
    const capped = parseDistribution({ distribution: 'zipf', alpha: 1.0000001, max: 60 }, 'x');
    const rng = new Rng(1);
    for (let i = 0; i < 1000; i++) assert.ok(capped.sample(rng) <= 60);
    const uncapped = parseDistribution({ distribution: 'zipf', alpha: 1.0000001 }, 'x');
    assert.equal(uncapped.sample(new Rng(2)), Number.MAX_SAFE_INTEGER, 'past any size bound, which the generator refuses');
  });

  test('a huge alpha ends too: every sample is 1 (2^(alpha-1) overflowed and the acceptance test compared NaN)', () => {
    const d = parseDistribution({ distribution: 'zipf', alpha: 1e12, max: 48 }, 'x');
    const rng = new Rng(3);
    for (let i = 0; i < 100; i++) assert.equal(d.sample(rng), 1);
  });
});
