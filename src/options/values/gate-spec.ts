import { ConfigError } from '../../errors/index.js';

/** One gate of `compare --fail-on`: fail when the metric's change crosses the limit (and its noise band). */
export interface Gate {
  /** As written, e.g. "median_ttft_ms>+20%". */
  text: string;
  /** The metric as named in the spec, e.g. "median_ttft_ms". */
  metric: string;
  /** The comparison row it reads (report/compare.ts compareRuns, which report/gates.ts evaluates it against), e.g. "ttft p50". */
  rowKey: string;
  /** The row's unit: 'ms', 'tok/s', 'req/s', 'fraction' or 'requests'. */
  unit: string;
  /** '>': fails when the change is above the limit; '<': below it. */
  op: '>' | '<';
  /** The limit: a fraction of the baseline when `relative` (+20% is 0.2), else in the metric's unit. */
  limit: number;
  relative: boolean;
}

const LATENCIES: ReadonlyArray<[string, readonly string[]]> = [
  ['ttft', ['mean', 'median', 'p50', 'p90', 'p99']],
  ['tpot', ['mean', 'median', 'p50', 'p90', 'p99']],
  ['itl', ['mean', 'median', 'p50', 'p99']],
  ['e2el', ['mean', 'median', 'p50', 'p90', 'p99']],
];

/** Every metric a gate may name, with its comparison row and unit. */
export const GATE_METRICS: ReadonlyMap<string, { rowKey: string; unit: string }> = new Map([
  ...LATENCIES.flatMap(([metric, fields]) => fields.map((f) => [`${f}_${metric}_ms`, { rowKey: `${metric} ${f === 'median' ? 'p50' : f}`, unit: 'ms' }] as const)),
  ['request_throughput', { rowKey: 'request_throughput', unit: 'req/s' }],
  ['output_throughput', { rowKey: 'output_throughput', unit: 'tok/s' }],
  ['total_token_throughput', { rowKey: 'total_token_throughput', unit: 'tok/s' }],
  ['completed', { rowKey: 'completed', unit: 'requests' }],
  ['failed', { rowKey: 'failed', unit: 'requests' }],
  ['error_rate', { rowKey: 'error_rate', unit: 'fraction' }],
  ['cache_hit_ratio', { rowKey: 'cache_hit_ratio', unit: 'fraction' }],
  ['prefix_cache.hit_ratio', { rowKey: 'cache_hit_ratio', unit: 'fraction' }],
  ['cache_efficiency', { rowKey: 'cache_efficiency', unit: 'fraction' }],
  ['prefix_cache.efficiency', { rowKey: 'cache_efficiency', unit: 'fraction' }],
]);

/** The known metrics in short, for an error line. */
export const KNOWN_GATE_METRICS =
  '{mean,median,p90,p99}_{ttft,tpot,e2el}_ms, {mean,median,p99}_itl_ms, request_throughput, output_throughput, total_token_throughput, completed, failed, error_rate, cache_hit_ratio (prefix_cache.hit_ratio), cache_efficiency (prefix_cache.efficiency)';

/** The units a limit may carry for a metric of each unit, and the factor to the metric's unit. */
const LIMIT_UNITS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  ms: { ms: 1, s: 1000 },
  'tok/s': { 'tok/s': 1 },
  'req/s': { 'req/s': 1 },
  fraction: { pt: 0.01 },
  requests: {},
};

const EXAMPLE = 'e.g. median_ttft_ms>+20%, p99_tpot_ms>+5ms, output_throughput<-5%, prefix_cache.efficiency<-0.02';

/**
 * Parses `--fail-on SPEC`: comma-separated gates METRIC>LIMIT or METRIC<LIMIT, the limit relative (`+20%`), absolute
 * with a unit that fits the metric (`+5ms`, `0.5s`, `-100tok/s`, `-2pt` for a ratio) or absolute plain, in the metric's
 * own unit (`-0.02` of a ratio). Throws a one-line ConfigError (exit 2) naming the gate and what was expected.
 */
export function parseGateSpec(spec: string): Gate[] {
  const parts = spec.split(',').map((part) => part.trim());
  if (parts.every((p) => p === '')) throw new ConfigError(`--fail-on: expected at least one gate, ${EXAMPLE}`);
  return parts.map((part) => {
    if (part === '') throw new ConfigError(`--fail-on ${spec}: an empty gate between commas`);
    return parseGate(part);
  });
}

function parseGate(text: string): Gate {
  const fail = (what: string): never => {
    throw new ConfigError(`--fail-on ${text}: ${what}`);
  };
  const match = /^([^<>=!]*?)\s*([<>=!]+)\s*(.*)$/.exec(text);
  if (match === null) return fail(`expected METRIC>LIMIT or METRIC<LIMIT, ${EXAMPLE}`);
  const [, metric = '', op = '', value = ''] = match;
  const known = GATE_METRICS.get(metric);
  if (known === undefined) return fail(`unknown metric "${metric}"; known: ${KNOWN_GATE_METRICS}`);
  if (op !== '>' && op !== '<') return fail(`bad operator "${op}"; expected > (fails when the change is above the limit) or < (below it)`);
  const number = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(%|[A-Za-z/]+)?$/.exec(value);
  if (number === null) return fail(`bad limit "${value}"; expected a number: relative (+20%), with a unit (+5ms), or plain (-0.02)`);
  const n = Number(number[1]);
  const unit = number[2];
  if (unit === '%') return { text, metric, rowKey: known.rowKey, unit: known.unit, op, limit: n / 100, relative: true };
  const factor = unit === undefined ? 1 : LIMIT_UNITS[known.unit]?.[unit];
  if (factor === undefined) {
    const fits = Object.keys(LIMIT_UNITS[known.unit] ?? {});
    return fail(`unit "${unit}" does not fit ${metric} (${known.unit}); expected %, ${fits.length === 0 ? '' : `${fits.join(', ')}, or `}a plain number in ${known.unit}`);
  }
  return { text, metric, rowKey: known.rowKey, unit: known.unit, op, limit: n * factor, relative: false };
}
