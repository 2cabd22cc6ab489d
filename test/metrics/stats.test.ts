import assert from 'node:assert/strict';
import { describe as group, test } from 'node:test';
import fc from 'fast-check';
import { describe, percentile, populationStd, sortAscending } from '../../src/metrics/stats.js';

const close = (actual: number, expected: number, tolerance = 1e-9): void => {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} is not within ${tolerance} of ${expected}`);
};

group('percentile (numpy linear)', () => {
  const oneToTen = Float64Array.from({ length: 10 }, (_, i) => i + 1);

  test('[1..10] matches numpy.percentile', () => {
    // numpy: np.percentile(range(1, 11), [0, 25, 50, 75, 90, 99, 99.9, 100])
    close(percentile(oneToTen, 0), 1);
    close(percentile(oneToTen, 25), 3.25);
    close(percentile(oneToTen, 50), 5.5);
    close(percentile(oneToTen, 75), 7.75);
    close(percentile(oneToTen, 90), 9.1);
    close(percentile(oneToTen, 99), 9.91);
    close(percentile(oneToTen, 99.9), 9.991);
    close(percentile(oneToTen, 100), 10);
  });

  test('single value, empty array, out of range', () => {
    assert.equal(percentile(Float64Array.of(7), 99), 7);
    assert.ok(Number.isNaN(percentile(new Float64Array(0), 50)));
    assert.throws(() => percentile(oneToTen, 101), RangeError);
    assert.throws(() => percentile(oneToTen, -1), RangeError);
    assert.throws(() => percentile(oneToTen, Number.NaN), RangeError);
  });
});

group('describe', () => {
  test('null when empty', () => {
    assert.equal(describe([]), null);
  });

  test('matches pandas describe on an unsorted array (sample std, ddof=1)', () => {
    const values = [4, 1, 3, 2, 5];
    const stats = describe(values)!;
    assert.deepEqual(values, [4, 1, 3, 2, 5], 'input not modified');
    assert.equal(stats.count, 5);
    close(stats.mean, 3);
    // pandas: pd.Series([4,1,3,2,5]).std() == 1.5811388300841898
    close(stats.std, 1.5811388300841898);
    close(populationStd(stats), Math.sqrt(2));
    assert.equal(stats.min, 1);
    assert.equal(stats.p25, 2);
    assert.equal(stats.p50, 3);
    assert.equal(stats.p75, 4);
    close(stats.p90, 4.6);
    close(stats.p99, 4.96);
    close(stats.p99_9, 4.996);
    assert.equal(stats.max, 5);
  });

  test('one value: std 0; large offsets keep precision', () => {
    const one = describe([42])!;
    assert.equal(one.std, 0);
    assert.equal(one.p99_9, 42);
    const offset = describe([1e9 + 1, 1e9 + 2, 1e9 + 3])!;
    close(offset.std, 1, 1e-6);
  });

  test('percentiles equal numpy bit for bit; mean and std agree to 1e-12', () => {
    // Expected values printed by numpy 2.4: np.percentile(xs, [25, 50, 75, 90, 99, 99.9]), np.mean, np.std(ddof=1), np.std.
    const xs = Array.from({ length: 37 }, (_, i) => ((i * 7919) % 101) / 3);
    const stats = describe(xs)!;
    assert.deepEqual(
      [stats.p25, stats.p50, stats.p75, stats.p90, stats.p99, stats.p99_9],
      [8.333333333333334, 16.666666666666668, 25.0, 29.73333333333333, 32.973333333333336, 33.29733333333334],
    );
    close(stats.mean, 16.702702702702705, 1e-12);
    close(stats.std, 9.890381842291006, 1e-12);
    close(populationStd(stats), 9.755812553615613, 1e-12);
  });

  test('accepts typed arrays', () => {
    const stats = describe(Float64Array.of(3, 1, 2))!;
    assert.equal(stats.p50, 2);
    assert.equal(stats.min, 1);
  });
});

group('sortAscending', () => {
  const sameAsFloat64Sort = (values: number[]): void => {
    const expected = Float64Array.from(values).sort();
    const input = Float64Array.from(values);
    const sorted = sortAscending(input);
    assert.equal(sorted, input, 'sorted in place');
    // Object.is: -0 before +0 and NaN last, exactly as Float64Array's sort.
    for (let i = 0; i < expected.length; i++) assert.ok(Object.is(sorted[i], expected[i]), `at ${i}: ${sorted[i]} against ${expected[i]} (${values.join(', ')})`);
  };

  test('orders any doubles as Float64Array sort does: non-negative ones by their bits, others sorted again', () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 0, noNaN: true })), sameAsFloat64Sort), { numRuns: 300 });
    fc.assert(fc.property(fc.array(fc.double()), sameAsFloat64Sort), { numRuns: 300 });
    sameAsFloat64Sort([3, -0, 0, 1.5, Number.POSITIVE_INFINITY, Number.NaN, 2]);
    sameAsFloat64Sort([0.25, 0, -1e-300, 7]);
  });

  test('a view into a larger buffer sorts only its own range', () => {
    const buffer = Float64Array.of(9, 5, 3, 4, 1, 0);
    sortAscending(buffer.subarray(1, 4));
    assert.deepEqual(Array.from(buffer), [9, 3, 4, 5, 1, 0]);
  });
});
