import type { Rng } from '../util/rng.js';

/**
 * When new sessions arrive in the open loop: a renewal process with gamma inter-arrival times (shape =
 * --burstiness; 1 is a Poisson process, below 1 is burstier, above 1 is more regular), at a rate that is constant
 * or ramps linearly (--ramp-up linear:START:END:SECONDS, then stays at END).
 *
 * A varying rate uses time rescaling: arrivals are drawn with mean gap 1 in "operational time" s = Λ(t), the
 * integral of the rate, and mapped back with t = Λ⁻¹(s). The gamma sampler is hand-written (Marsaglia–Tsang, a few
 * lines) for the reason DESIGN.md gives for all distributions: no small, well-kept library has it.
 */
export interface ArrivalConfig {
  /** Sessions per second after any ramp. */
  ratePerSec: number;
  /** Gamma shape of the inter-arrival times; 1 = Poisson. */
  burstiness: number;
  /** Linear ramp from startPerSec to ratePerSec over seconds. */
  rampUp?: { startPerSec: number; seconds: number };
}

/** One line describing the arrival process, for logs and results. */
export function describeArrivals(config: ArrivalConfig): string {
  const shape = config.burstiness === 1 ? 'Poisson' : `gamma shape ${config.burstiness}`;
  const ramp = config.rampUp ? `, ramping from ${config.rampUp.startPerSec}/s over ${config.rampUp.seconds} s` : '';
  return `${config.ratePerSec} sessions/s (${shape}${ramp})`;
}

function normal(rng: Rng): number {
  // Box–Muller; 1 - next() keeps the logarithm's argument in (0, 1].
  return Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
}

/** A gamma variate with the given shape and scale 1 (Marsaglia & Tsang, 2000). */
export function sampleGamma(rng: Rng, shape: number): number {
  if (shape === 1) return -Math.log(1 - rng.next());
  if (shape < 1) return sampleGamma(rng, shape + 1) * Math.pow(1 - rng.next(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = normal(rng);
    const v = Math.pow(1 + c * x, 3);
    if (v <= 0) continue;
    const u = 1 - rng.next();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** The arrival times of one run, as offsets in milliseconds from its start. Deterministic for a given Rng. */
export class ArrivalSchedule {
  readonly #config: ArrivalConfig;
  readonly #rng: Rng;
  /** Operational time of the last arrival (expected arrivals so far). */
  #s = 0;

  constructor(config: ArrivalConfig, rng: Rng) {
    this.#config = config;
    this.#rng = rng;
  }

  /** Offset (ms from the run's start) of the next arrival; Infinity when the rate is 0 for ever after. */
  next(): number {
    const k = this.#config.burstiness;
    this.#s += sampleGamma(this.#rng, k) / k; // mean 1 in operational time
    return this.#timeAt(this.#s) * 1000;
  }

  /** Λ⁻¹(s) in seconds for the (possibly ramping) rate. */
  #timeAt(s: number): number {
    const r1 = this.#config.ratePerSec;
    const ramp = this.#config.rampUp;
    if (ramp === undefined || ramp.seconds <= 0) return r1 > 0 ? s / r1 : Infinity;
    const r0 = ramp.startPerSec;
    const T = ramp.seconds;
    const sAtT = ((r0 + r1) / 2) * T; // the ramp's area
    if (s > sAtT) return r1 > 0 ? T + (s - sAtT) / r1 : Infinity;
    const a = (r1 - r0) / (2 * T);
    if (Math.abs(a) < 1e-12) return s / r0;
    // a t² + r0 t - s = 0, the root in [0, T]
    return (-r0 + Math.sqrt(r0 * r0 + 4 * a * s)) / (2 * a);
  }
}
