import { ConfigError } from '../errors/index.js';
import type { Rng } from './rng.js';

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

/** The distribution names parseDistribution accepts: the reference's five, plus `exponential`. */
export const DISTRIBUTION_NAMES = ['constant', 'uniform', 'zipf', 'poisson', 'lognormal', 'exponential'] as const;

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

/** Zipf over k >= 1 with P(k) ∝ k^-a, a > 1: numpy's rejection sampler (Devroye). Unbounded; `max` caps later. */
function zipf(rng: Rng, a: number): number {
  const am1 = a - 1;
  const b = 2 ** am1;
  for (;;) {
    const u = 1 - rng.next();
    const v = rng.next();
    const x = Math.floor(u ** (-1 / am1));
    if (x < 1 || !Number.isFinite(x) || x > Number.MAX_SAFE_INTEGER) continue;
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

function fail(where: string, problem: string): never {
  throw new ConfigError(`${where}: ${problem}`);
}

function numberField(obj: Record<string, unknown>, key: string, where: string, required: true): number;
function numberField(obj: Record<string, unknown>, key: string, where: string, required: false): number | undefined;
function numberField(obj: Record<string, unknown>, key: string, where: string, required: boolean): number | undefined {
  const value = obj[key];
  if (value === undefined || value === null) {
    if (required) fail(where, `"${key}" is required for the ${String(obj.distribution)} distribution`);
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(where, `"${key}" must be a number, got ${JSON.stringify(value)}`);
  return value;
}

/** The reference caps with `max` only when it is truthy (0 means no cap). */
function capOf(obj: Record<string, unknown>, where: string): number | undefined {
  const max = numberField(obj, 'max', where, false);
  if (max === undefined || max === 0) return undefined;
  if (max < 0) fail(where, `"max" must be positive, got ${max}`);
  return max;
}

function capped(base: string, max: number | undefined): string {
  return max === undefined ? `${base})` : `${base}, max=${max})`;
}

function lognormal(obj: Record<string, unknown>, where: string, max: number | undefined): Distribution {
  const hasAverage = obj.average !== undefined || obj.median_ratio !== undefined;
  const hasMean = obj.mean !== undefined || obj.sigma !== undefined;
  if (hasAverage && hasMean) fail(where, 'lognormal takes either "average" (and "median_ratio") or "mean" and "sigma", not both');
  const finish = (x: number): number => Math.round(max === undefined ? x : Math.min(x, max));
  const range = [0, max ?? Infinity] as const;
  if (hasMean) {
    const mu = numberField(obj, 'mean', where, true);
    const sigma = numberField(obj, 'sigma', where, true);
    if (sigma < 0) fail(where, `"sigma" must be >= 0, got ${sigma}`);
    return {
      describe: capped(`lognormal(mean=${mu}, sigma=${sigma}`, max),
      range,
      sample: (rng) => finish(Math.exp(mu + sigma * normal(rng))),
    };
  }
  const average = numberField(obj, 'average', where, true);
  const ratio = numberField(obj, 'median_ratio', where, false) ?? 0.85;
  if (average < 1) fail(where, `"average" must be >= 1, got ${average}`);
  if (!(ratio > 0 && ratio < 1)) fail(where, `"median_ratio" must be in (0, 1), got ${ratio}`);
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

/**
 * Parses one distribution object of a generation config, in the reference's forms (see docs/DATASETS.md):
 * `constant {value}`, `uniform {min, max}` (inclusive integers when both are integers), `zipf {alpha > 1}`,
 * `poisson {alpha}`, `lognormal {average, median_ratio?}` or `{mean, sigma}`, each with an optional `max` cap,
 * plus chatload's `exponential {mean}`. A bad value is a ConfigError naming `where`.
 */
export function parseDistribution(value: unknown, where: string): Distribution {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(where, `expected a distribution object such as {"distribution": "uniform", "min": 1, "max": 5}, got ${JSON.stringify(value) ?? 'nothing'}`);
  }
  const obj = value as Record<string, unknown>;
  const name = obj.distribution;
  if (typeof name !== 'string' || !(DISTRIBUTION_NAMES as readonly string[]).includes(name)) {
    fail(where, `"distribution" must be one of ${DISTRIBUTION_NAMES.join(', ')}, got ${JSON.stringify(name) ?? 'nothing'}`);
  }
  // uniform's own `max` is its upper bound, not a cap.
  const max = name === 'uniform' ? undefined : capOf(obj, where);
  const cap = (x: number): number => (max === undefined ? x : Math.min(x, max));
  switch (name) {
    case 'constant': {
      const v = numberField(obj, 'value', where, true);
      return { describe: `constant(${v})`, range: [v, v], sample: () => v };
    }
    case 'uniform': {
      const lo = numberField(obj, 'min', where, true);
      const hi = numberField(obj, 'max', where, true);
      if (hi < lo) fail(where, `uniform needs min <= max, got min=${lo} max=${hi}`);
      const integers = Number.isInteger(lo) && Number.isInteger(hi);
      return {
        describe: `uniform(${lo}, ${hi})`,
        range: [lo, hi],
        sample: integers ? (rng) => rng.int(lo, hi) : (rng) => lo + (hi - lo) * rng.next(),
      };
    }
    case 'zipf': {
      const alpha = numberField(obj, 'alpha', where, true);
      if (!(alpha > 1)) fail(where, `zipf needs "alpha" > 1, got ${alpha}`);
      return { describe: capped(`zipf(alpha=${alpha}`, max), range: [Math.min(1, max ?? 1), max ?? Infinity], sample: (rng) => cap(zipf(rng, alpha)) };
    }
    case 'poisson': {
      const alpha = numberField(obj, 'alpha', where, true);
      if (alpha < 0) fail(where, `poisson needs "alpha" >= 0, got ${alpha}`);
      return { describe: capped(`poisson(alpha=${alpha}`, max), range: [0, max ?? Infinity], sample: (rng) => cap(poisson(rng, alpha)) };
    }
    case 'exponential': {
      const mean = numberField(obj, 'mean', where, true);
      if (mean < 0) fail(where, `exponential needs "mean" >= 0, got ${mean}`);
      return { describe: capped(`exponential(mean=${mean}`, max), range: [0, max ?? Infinity], sample: (rng) => cap(rng.exponential(mean)) };
    }
    default:
      return lognormal(obj, where, max);
  }
}

/** Positional parameters of the compact flag form, per distribution. */
const POSITIONAL: Record<string, string[]> = {
  constant: ['value'],
  uniform: ['min', 'max'],
  exponential: ['mean', 'max'],
  zipf: ['alpha', 'max'],
  poisson: ['alpha', 'max'],
  lognormal: ['average', 'median_ratio', 'max'],
};

/**
 * Parses a distribution flag: JSON object text (the config form), or the compact `NAME:ARGS`: `constant:5`,
 * `uniform:1:5`, `exponential:2.5`, `lognormal:average=5,median_ratio=0.85`, `zipf:alpha=1.5,max=20`,
 * `poisson:alpha=3` (positional values separated by `:` or `,`, or `key=value` pairs). ConfigError naming `where`.
 */
export function parseDistributionFlag(text: string, where: string): Distribution {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      fail(where, `not valid JSON: ${(error as Error).message.split('\n')[0]}`);
    }
    return parseDistribution(value, where);
  }
  const colon = trimmed.indexOf(':');
  const name = (colon === -1 ? trimmed : trimmed.slice(0, colon)).trim();
  const positional = POSITIONAL[name];
  if (positional === undefined) {
    fail(where, `expected NAME:ARGS with NAME one of ${DISTRIBUTION_NAMES.join(', ')} (e.g. uniform:1:5, exponential:2), or a JSON object; got ${JSON.stringify(text)}`);
  }
  const obj: Record<string, unknown> = { distribution: name };
  const args = colon === -1 ? [] : trimmed.slice(colon + 1).split(/[:,]/).map((a) => a.trim()).filter((a) => a !== '');
  args.forEach((arg, i) => {
    const eq = arg.indexOf('=');
    const key = eq === -1 ? positional[i] : arg.slice(0, eq).trim();
    const raw = eq === -1 ? arg : arg.slice(eq + 1).trim();
    if (key === undefined) fail(where, `too many values for ${name}: expected ${positional.join(', ')}`);
    const n = Number(raw);
    if (raw === '' || !Number.isFinite(n)) fail(where, `"${key}" must be a number, got ${JSON.stringify(raw)}`);
    obj[key] = n;
  });
  return parseDistribution(obj, where);
}
