import { parseDistributionFlagSpec, parseDistributionSpec, type DistributionSpec } from '../options/values/distribution-spec.js';
import type { Rng } from '../util/rng.js';

// Specs (what a config or flag says) are validated in options/, once; this file turns them into samplers.
export { DISTRIBUTION_NAMES, type DistributionSpec } from '../options/values/distribution-spec.js';

/**
 * A random quantity of a generation config or a flag (token counts, turn counts, think time in seconds). The unit is
 * the caller's. `sampleBatch` exists where a batch differs from independent samples (lognormal's `average` form
 * rescales each batch so its mean is exactly the average, as the reference does).
 */
export interface Distribution {
  /** One line, e.g. `uniform(12, 18)` or `lognormal(average=1000, median_ratio=0.85, max=5000)`. */
  readonly describe: string;
  /** Smallest and largest value a sample can take (before rounding); the largest is Infinity when unbounded. */
  readonly range: readonly [number, number];
  sample(rng: Rng): number;
  sampleBatch?(rng: Rng, n: number): number[];
}

/** n samples of `d`: its own batch when it has one, else n independent samples. */
export function sampleMany(d: Distribution, rng: Rng, n: number): number[] {
  if (d.sampleBatch) return d.sampleBatch(rng, n);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(d.sample(rng));
  return out;
}

/** A standard normal sample (Box-Muller; one of the pair is dropped to keep each call independent of the last). */
function normal(rng: Rng): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * Zipf over k >= 1 with P(k) ∝ k^-a, a > 1: numpy's rejection sampler (Devroye). `max` caps the result.
 * A draw past 2^53 (or Infinity) is rejected by numpy, which loops for ever when `a` is close to 1 (a = 1.0000001
 * makes nearly every draw overflow: found by the fuzz test). Here such a draw is past any cap, so it returns the cap
 * (or 2^53 without one, which the generator's size bounds then refuse with a clear error): the run always ends.
 */
function zipf(rng: Rng, a: number, max: number | undefined): number {
  const am1 = a - 1;
  const b = 2 ** am1;
  // Past a ≈ 1025, 2^(a-1) overflows and the acceptance test compares NaN for ever; P(1) = 1/ζ(a) is then 1 to
  // double precision (the fuzz test found alpha 1e12).
  if (!Number.isFinite(b)) return 1;
  for (;;) {
    const u = 1 - rng.next();
    const v = rng.next();
    const x = Math.floor(u ** (-1 / am1));
    if (!Number.isFinite(x) || x > Number.MAX_SAFE_INTEGER) return max ?? Number.MAX_SAFE_INTEGER;
    if (x < 1) continue;
    const t = (1 + 1 / x) ** am1;
    if ((v * x * (t - 1)) / (b - 1) <= t / b) return x;
  }
}

/** Stirling-series coefficients of numpy's loggam. */
const LOGGAM = [8.333333333333333e-2, -2.777777777777778e-3, 7.936507936507937e-4, -5.952380952380952e-4, 8.417508417508418e-4, -1.917526917526918e-3, 6.41025641025641e-3, -2.955065359477124e-2, 1.796443723688307e-1, -1.3924322169059];

/** log(k!): a sum up to 1000, numpy's loggam(k + 1) above (a loop to k made poisson with a huge alpha run for ever). */
function logFactorial(k: number): number {
  if (k <= 1000) {
    let s = 0;
    for (let i = 2; i <= k; i++) s += Math.log(i);
    return s;
  }
  const x = k + 1;
  const x2 = 1 / (x * x);
  let series = LOGGAM[9]!;
  for (let i = 8; i >= 0; i--) series = series * x2 + LOGGAM[i]!;
  return series / x + 0.5 * Math.log(2 * Math.PI) + (x - 0.5) * Math.log(x) - x;
}

/** Poisson(lambda): Knuth's product method below 30, Hörmann's PTRS (transformed rejection) above. */
function poisson(rng: Rng, lambda: number): number {
  if (lambda <= 0) return 0;
  if (lambda < 30) {
    const limit = Math.exp(-lambda);
    let k = 0;
    let p = rng.next();
    while (p > limit) {
      k += 1;
      p *= rng.next();
    }
    return k;
  }
  const slam = Math.sqrt(lambda);
  const loglam = Math.log(lambda);
  const b = 0.931 + 2.53 * slam;
  const a = -0.059 + 0.02483 * b;
  const invalpha = 1.1239 + 1.1328 / (b - 3.4);
  const vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const u = rng.next() - 0.5;
    const v = rng.next();
    const us = 0.5 - Math.abs(u);
    const k = Math.floor(((2 * a) / us + b) * u + lambda + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (Math.log(v) + Math.log(invalpha) - Math.log(a / (us * us) + b) <= -lambda + k * loglam - logFactorial(k)) return k;
  }
}

function capped(base: string, max: number | undefined): string {
  return max === undefined ? `${base})` : `${base}, max=${max})`;
}

function lognormal(spec: Extract<DistributionSpec, { distribution: 'lognormal' }>): Distribution {
  const max = spec.max;
  const finish = (x: number): number => Math.round(max === undefined ? x : Math.min(x, max));
  const range = [0, max ?? Infinity] as const;
  if ('sigma' in spec) {
    const { mean: mu, sigma } = spec;
    return {
      describe: capped(`lognormal(mean=${mu}, sigma=${sigma}`, max),
      range,
      sample: (rng) => finish(Math.exp(mu + sigma * normal(rng))),
    };
  }
  const { average, median_ratio: ratio } = spec;
  const mu = Math.log(average * ratio);
  const sigma = Math.sqrt(2 * Math.log(1 / ratio));
  // As the reference: each batch is rescaled so its mean is exactly `average`, then capped, then rounded.
  const batch = (rng: Rng, n: number): number[] => {
    const raw: number[] = [];
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const x = Math.exp(mu + sigma * normal(rng));
      raw.push(x);
      sum += x;
    }
    const scale = sum > 0 ? (average * n) / sum : 1;
    return raw.map((x) => finish(x * scale));
  };
  return {
    describe: capped(`lognormal(average=${average}, median_ratio=${ratio}`, max),
    range,
    sample: (rng) => finish(Math.exp(mu + sigma * normal(rng))),
    sampleBatch: batch,
  };
}

/** The sampler of a validated spec (see options/values/distribution-spec.ts for the forms). */
export function distributionOf(spec: DistributionSpec): Distribution {
  switch (spec.distribution) {
    case 'constant': {
      const v = spec.value;
      return { describe: `constant(${v})`, range: [v, v], sample: () => v };
    }
    case 'uniform': {
      const { min: lo, max: hi } = spec;
      const integers = Number.isInteger(lo) && Number.isInteger(hi);
      return {
        describe: `uniform(${lo}, ${hi})`,
        range: [lo, hi],
        sample: integers ? (rng) => rng.int(lo, hi) : (rng) => lo + (hi - lo) * rng.next(),
      };
    }
    case 'lognormal':
      return lognormal(spec);
  }
  const max = spec.max;
  const cap = (x: number): number => (max === undefined ? x : Math.min(x, max));
  switch (spec.distribution) {
    case 'zipf': {
      const alpha = spec.alpha;
      return { describe: capped(`zipf(alpha=${alpha}`, max), range: [Math.min(1, max ?? 1), max ?? Infinity], sample: (rng) => cap(zipf(rng, alpha, max)) };
    }
    case 'poisson': {
      const alpha = spec.alpha;
      return { describe: capped(`poisson(alpha=${alpha}`, max), range: [0, max ?? Infinity], sample: (rng) => cap(poisson(rng, alpha)) };
    }
    case 'exponential': {
      const mean = spec.mean;
      return { describe: capped(`exponential(mean=${mean}`, max), range: [0, max ?? Infinity], sample: (rng) => cap(rng.exponential(mean)) };
    }
  }
}

/**
 * Parses one distribution object of a generation config into its sampler (the forms: docs/DATASETS.md and
 * parseDistributionSpec). A bad value is a ConfigError naming `where`.
 */
export function parseDistribution(value: unknown, where: string): Distribution {
  return distributionOf(parseDistributionSpec(value, where));
}

/**
 * Parses a distribution flag (JSON object text, or the compact `NAME:ARGS` such as `uniform:1:5` or `exponential:2.5`)
 * into its sampler. ConfigError naming `where`.
 */
export function parseDistributionFlag(text: string, where: string): Distribution {
  return distributionOf(parseDistributionFlagSpec(text, where));
}
