import type { RunData } from '../store/run-data.js';
import { compareRuns, type ComparisonRow } from './compare.js';
import type { Gate } from '../options/values/gate-spec.js';
import type { RepeatInterval } from './repeats.js';

/** Where a gate's noise band comes from: both runs' `--repeat` 95% intervals, or each run's per-request spread. */
export type BandSource = 'repeat' | 'requests';

/**
 * How a gate came out:
 * - `pass`: the change did not cross the limit;
 * - `noise`: it crossed the limit, but within the noise band: a pass (a change inside the band never fails);
 * - `fail`: it crossed the limit, beyond the band (or with no band known);
 * - `missing`: a run has no value for the metric (no completed request, a p99 of fewer than 100): a failure, since
 *   nothing was shown to pass.
 */
export type GateVerdict = 'pass' | 'noise' | 'fail' | 'missing';

/** One gate's outcome: the values, the change, its band and the verdict. */
export interface GateResult {
  gate: Gate;
  base: number | null;
  candidate: number | null;
  /** candidate − base, in the metric's unit (null without both values). */
  change: number | null;
  /** The change as a fraction of |base| (null without both; ±Infinity from a base of 0). */
  relativeChange: number | null;
  /** The half-width of the change's 95% band, √(hb² + hc²), in the metric's unit; null when a run's is unknown. */
  band: number | null;
  bandSource: BandSource;
  verdict: GateVerdict;
  failed: boolean;
}

/**
 * The comparison rows the gates read, baseline first. The band comes from the `--repeat` intervals only when both runs
 * are repeated runs (a mean with its interval against one run's per-request spread would compare unlike things); else
 * every row is each run's own values with their per-request bands (report/noise.ts).
 */
export function gateRows(runs: readonly [RunData, RunData], repeats: readonly [readonly RepeatInterval[] | undefined, readonly RepeatInterval[] | undefined]): { rows: ComparisonRow[]; repeated: boolean } {
  const repeated = repeats[0] !== undefined && repeats[1] !== undefined;
  return { rows: compareRuns(runs, repeated ? repeats : []), repeated };
}

/** Whether both runs' repeat intervals cover `rowKey` (then compareRuns took its values and bands from them). */
function fromRepeats(rowKey: string, repeats: readonly [readonly RepeatInterval[] | undefined, readonly RepeatInterval[] | undefined]): boolean {
  return repeats.every((intervals) => intervals?.some((i) => i.key === rowKey && i.mean !== null) === true);
}

/**
 * Each gate against the rows of gateRows (values[0] the baseline, values[1] the candidate). A gate fails when the
 * change (relative or absolute, as its limit) crosses the limit and |change| is beyond the band; with no band known
 * the limit alone decides.
 */
export function evaluateGates(
  gates: readonly Gate[],
  rows: readonly ComparisonRow[],
  repeats: readonly [readonly RepeatInterval[] | undefined, readonly RepeatInterval[] | undefined] = [undefined, undefined],
): GateResult[] {
  return gates.map((gate) => {
    const row = rows.find((r) => r.key === gate.rowKey);
    const base = row?.values[0] ?? null;
    const candidate = row?.values[1] ?? null;
    const hb = row?.noise[0] ?? null;
    const hc = row?.noise[1] ?? null;
    const band = hb === null || hc === null ? null : Math.sqrt(hb * hb + hc * hc);
    const bandSource: BandSource = fromRepeats(gate.rowKey, repeats) ? 'repeat' : 'requests';
    if (base === null || candidate === null) return { gate, base, candidate, change: null, relativeChange: null, band, bandSource, verdict: 'missing', failed: true };
    const change = candidate - base;
    const relativeChange = base !== 0 ? change / Math.abs(base) : change === 0 ? 0 : Math.sign(change) * Number.POSITIVE_INFINITY;
    const measured = gate.relative ? relativeChange : change;
    const crossed = gate.op === '>' ? measured > gate.limit : measured < gate.limit;
    const verdict: GateVerdict = !crossed ? 'pass' : band !== null && Math.abs(change) <= band ? 'noise' : 'fail';
    return { gate, base, candidate, change, relativeChange, band, bandSource, verdict, failed: verdict === 'fail' };
  });
}
