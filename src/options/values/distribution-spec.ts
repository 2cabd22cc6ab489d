import { ConfigError } from '../../errors/config-error.js';
import { shownValue } from '../../errors/shown-value.js';

/*
 * A distribution as plain, validated data: what a generation config's distribution objects and flags such as
 * --think-time say, checked once. It is cloneable (worker threads get it as it is); synth/distributions.ts turns it
 * into a sampler. The keys are the generation config's own (the reference's), so a spec is also its canonical JSON.
 */

/** The distribution names a spec may have: the reference's five, plus `exponential`. */
export const DISTRIBUTION_NAMES = ['constant', 'uniform', 'zipf', 'poisson', 'lognormal', 'exponential'] as const;

/**
 * One distribution. `max` caps a sample (absent: no cap), except for `uniform`, whose `max` is its upper bound
 * (inclusive integers when `min` and `max` are integers). `lognormal` is given by `average` and `median_ratio` (the
 * reference's form) or by the underlying normal's `mean` and `sigma`.
 */
export type DistributionSpec =
  | { readonly distribution: 'constant'; readonly value: number }
  | { readonly distribution: 'uniform'; readonly min: number; readonly max: number }
  | { readonly distribution: 'zipf'; readonly alpha: number; readonly max?: number }
  | { readonly distribution: 'poisson'; readonly alpha: number; readonly max?: number }
  | { readonly distribution: 'exponential'; readonly mean: number; readonly max?: number }
  | { readonly distribution: 'lognormal'; readonly average: number; readonly median_ratio: number; readonly max?: number }
  | { readonly distribution: 'lognormal'; readonly mean: number; readonly sigma: number; readonly max?: number };

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
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(where, `"${key}" must be a number, got ${shownValue(value)}`);
  return value;
}

/** The reference caps with `max` only when it is truthy (0 means no cap). */
function capOf(obj: Record<string, unknown>, where: string): { max?: number } {
  const max = numberField(obj, 'max', where, false);
  if (max === undefined || max === 0) return {};
  if (max < 0) fail(where, `"max" must be positive, got ${max}`);
  return { max };
}

function lognormalSpec(obj: Record<string, unknown>, where: string, cap: { max?: number }): DistributionSpec {
  const hasAverage = obj.average !== undefined || obj.median_ratio !== undefined;
  const hasMean = obj.mean !== undefined || obj.sigma !== undefined;
  if (hasAverage && hasMean) fail(where, 'lognormal takes either "average" (and "median_ratio") or "mean" and "sigma", not both');
  if (hasMean) {
    const mean = numberField(obj, 'mean', where, true);
    const sigma = numberField(obj, 'sigma', where, true);
    if (sigma < 0) fail(where, `"sigma" must be >= 0, got ${sigma}`);
    return { distribution: 'lognormal', mean, sigma, ...cap };
  }
  const average = numberField(obj, 'average', where, true);
  const ratio = numberField(obj, 'median_ratio', where, false) ?? 0.85;
  if (average < 1) fail(where, `"average" must be >= 1, got ${average}`);
  if (!(ratio > 0 && ratio < 1)) fail(where, `"median_ratio" must be in (0, 1), got ${ratio}`);
  return { distribution: 'lognormal', average, median_ratio: ratio, ...cap };
}

/**
 * Validates one distribution object of a generation config, in the reference's forms (see docs/DATASETS.md):
 * `constant {value}`, `uniform {min, max}`, `zipf {alpha > 1}`, `poisson {alpha}`, `lognormal {average,
 * median_ratio?}` or `{mean, sigma}`, each with an optional `max` cap, plus chatload's `exponential {mean}`.
 * A bad value is a ConfigError naming `where`.
 */
export function parseDistributionSpec(value: unknown, where: string): DistributionSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(where, `expected a distribution object such as {"distribution": "uniform", "min": 1, "max": 5}, got ${shownValue(value)}`);
  }
  const obj = value as Record<string, unknown>;
  const name = obj.distribution;
  if (typeof name !== 'string' || !(DISTRIBUTION_NAMES as readonly string[]).includes(name)) {
    fail(where, `"distribution" must be one of ${DISTRIBUTION_NAMES.join(', ')}, got ${shownValue(name)}`);
  }
  // uniform's own `max` is its upper bound, not a cap.
  const cap = name === 'uniform' ? {} : capOf(obj, where);
  switch (name) {
    case 'constant':
      return { distribution: 'constant', value: numberField(obj, 'value', where, true) };
    case 'uniform': {
      const min = numberField(obj, 'min', where, true);
      const max = numberField(obj, 'max', where, true);
      if (max < min) fail(where, `uniform needs min <= max, got min=${min} max=${max}`);
      return { distribution: 'uniform', min, max };
    }
    case 'zipf': {
      const alpha = numberField(obj, 'alpha', where, true);
      if (!(alpha > 1)) fail(where, `zipf needs "alpha" > 1, got ${alpha}`);
      return { distribution: 'zipf', alpha, ...cap };
    }
    case 'poisson': {
      const alpha = numberField(obj, 'alpha', where, true);
      if (alpha < 0) fail(where, `poisson needs "alpha" >= 0, got ${alpha}`);
      return { distribution: 'poisson', alpha, ...cap };
    }
    case 'exponential': {
      const mean = numberField(obj, 'mean', where, true);
      if (mean < 0) fail(where, `exponential needs "mean" >= 0, got ${mean}`);
      return { distribution: 'exponential', mean, ...cap };
    }
    default:
      return lognormalSpec(obj, where, cap);
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
 * Validates a distribution flag: JSON object text (the config form), or the compact `NAME:ARGS`: `constant:5`,
 * `uniform:1:5`, `exponential:2.5`, `lognormal:average=5,median_ratio=0.85`, `zipf:alpha=1.5,max=20`,
 * `poisson:alpha=3` (positional values separated by `:` or `,`, or `key=value` pairs). ConfigError naming `where`.
 */
export function parseDistributionFlagSpec(text: string, where: string): DistributionSpec {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      fail(where, `not valid JSON: ${(error as Error).message.split('\n')[0]}`);
    }
    return parseDistributionSpec(value, where);
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
  return parseDistributionSpec(obj, where);
}

/** The fields of a spec that are in its unit (seconds for --think-time): the rest (alpha, sigma, median_ratio) are shapes. */
const SCALE_FIELDS = ['value', 'min', 'max', 'mean', 'average'] as const;

/**
 * A spec of seconds whose scale stays within `maxSeconds` (issue #35: past a year a pause is a slip, ms given for s):
 * one ConfigError naming the field. A lognormal's `mean` is of the underlying normal: its scale is e^mean.
 */
export function checkSecondsSpec(spec: DistributionSpec, maxSeconds: number, where: string): DistributionSpec {
  for (const key of SCALE_FIELDS) {
    const field: unknown = (spec as unknown as Readonly<Record<string, unknown>>)[key];
    const raw = typeof field === 'number' ? field : undefined;
    const value = raw !== undefined && key === 'mean' && spec.distribution === 'lognormal' && 'sigma' in spec ? Math.exp(raw) : raw;
    if (value !== undefined && value > maxSeconds) fail(where, `"${key}" must be at most ${maxSeconds.toLocaleString('en-US')} seconds (a year)${value === raw ? `, got ${shownValue(raw)}` : `: e^${raw} is ${value.toExponential(2)}`}`);
  }
  return spec;
}
