import type { TurnSummary } from '../metrics/per-turn.js';
import type { RequestRecord } from '../metrics/record.js';
import { percentileSupported } from '../metrics/percentile-support.js';
import { sortAscending } from '../metrics/stats.js';
import { dotsAndLinesChart, lineChart, ninesChart, stackedBarChart, type SeriesPoint, type StackedBar } from './charts.js';
import { chartFigure } from './html-util.js';
import { cdfOfSorted, ninesOfSorted, positiveOf, sortedLatencySamples, timeSeries, type TimeSeries } from './series.js';
import { counted } from '../util/plural.js';

/** A uniform sample of a run's records (RunData.sampled): how many records it holds and how many the run has. */
export interface RecordSample {
  /** Records in the sample (count). */
  size: number;
  /** Records in the run (count). */
  total: number;
}

/** The caption fragment naming a sample, e.g. "a uniform sample of 200 of 2000 records". */
export function sampleText(sample: RecordSample): string {
  return `a uniform sample of ${sample.size} of ${sample.total} records`;
}

/** The latency metrics charted per turn, with their display names. */
const TURN_LATENCIES = [
  ['ttft_ms', 'TTFT'],
  ['tpot_ms', 'TPOT'],
  ['e2el_ms', 'E2EL'],
] as const;

const PERCENTILE_SERIES = [
  ['p50', 'p50'],
  ['p90', 'p90'],
  ['p99', 'p99'],
] as const;

/** Per-turn charts: TTFT, TPOT, E2EL at p50/p90/p99 against the turn index; tokens and cache; hit ratio. Figures' HTML. */
export function perTurnCharts(perTurn: readonly TurnSummary[]): string[] {
  const figures: string[] = [];
  if (perTurn.length === 0) return figures;
  for (const [key, name] of TURN_LATENCIES) {
    const points: SeriesPoint[] = [];
    for (const t of perTurn) {
      const stats = t[key];
      if (stats === null) continue;
      // A turn's p99 is drawn only from 100 requests, as the terminal shows it (fewer: it is just the max).
      for (const [field, series] of PERCENTILE_SERIES) if (percentileSupported(Number(field.slice(1)), stats.count)) points.push({ x: t.turn, y: stats[field], series });
    }
    if (points.length === 0) continue;
    figures.push(
      chartFigure(
        `${key.replace('_ms', '')}-per-turn`,
        `${name} by turn (ms)`,
        lineChart(points, { xLabel: 'turn', xIntegers: true, yLabel: `${name} (ms)`, dots: true, seriesOrder: ['p50', 'p90', 'p99'] }),
        'Completed requests of each user turn across conversations. p99 is drawn only for turns with 100 requests or more.',
      ),
    );
  }

  const tokens: SeriesPoint[] = [];
  for (const t of perTurn) {
    if (t.input_num_tokens !== null) tokens.push({ x: t.turn, y: t.input_num_tokens.mean, series: 'input tokens' });
    if (t.expected_cached_tokens !== null) tokens.push({ x: t.turn, y: t.expected_cached_tokens.mean, series: 'expected cached' });
    if (t.cached_tokens !== null) tokens.push({ x: t.turn, y: t.cached_tokens.mean, series: 'cached (server)' });
  }
  if (tokens.length > 0) {
    figures.push(
      chartFigure(
        'tokens-per-turn',
        'Prompt and cached tokens by turn (mean)',
        lineChart(tokens, {
          xLabel: 'turn',
          xIntegers: true,
          yLabel: 'tokens',
          dots: true,
          seriesOrder: ['input tokens', 'expected cached', 'cached (server)'],
        }),
        'Expected: what a prefix cache could reuse, the longest block-aligned prefix already sent by any conversation (docs/METRICS.md). Cached: what the server reported.',
      ),
    );
  }

  const ratio: SeriesPoint[] = [];
  for (const t of perTurn) {
    const input = t.input_num_tokens?.mean ?? 0;
    if (input > 0 && t.expected_cached_tokens !== null) {
      ratio.push({ x: t.turn, y: Math.min(1, t.expected_cached_tokens.mean / input), series: 'expected cached' });
    }
    if (t.cache_hit_ratio !== null) ratio.push({ x: t.turn, y: t.cache_hit_ratio, series: 'cached (server)' });
  }
  if (ratio.some((p) => p.series === 'cached (server)')) {
    figures.push(
      chartFigure(
        'cache-hit-per-turn',
        'Cache hit ratio by turn',
        lineChart(ratio, {
          xLabel: 'turn',
          xIntegers: true,
          yLabel: 'cached / prompt',
          dots: true,
          yPercent: true,
          seriesOrder: ['expected cached', 'cached (server)'],
        }),
        'Expected: what a perfect prefix cache could reuse. Cached: what the server reported.',
      ),
    );
  }
  return figures;
}

/** Extra per-request timings charted as distributions when the records carry them (open-loop runs). */
const OPTIONAL_DISTRIBUTIONS = [
  ['ttft_from_scheduled_ms', 'TTFT from the scheduled send time'],
  ['e2el_from_scheduled_ms', 'E2EL from the scheduled send time'],
  ['schedule_lag_ms', 'Schedule lag'],
  ['queue_ms', 'Client queue time'],
] as const;

/**
 * CDFs of TTFT, TPOT, ITL and E2EL (and schedule lag / queue time when present). Figures' HTML. With `sample` (the
 * records are a uniform sample of the run's), each caption says so: a sample's CDF estimates the run's.
 */
export function distributionCharts(records: readonly RequestRecord[], sample: RecordSample | null = null): string[] {
  const samples = sortedLatencySamples(records);
  const sets: Array<[string, string, Float64Array]> = [
    ['ttft', 'TTFT', samples.ttft_ms],
    ['tpot', 'TPOT', samples.tpot_ms],
    ['itl', 'ITL (every inter-chunk gap)', samples.itl_ms],
    ['e2el', 'E2EL', samples.e2el_ms],
  ];
  for (const [key, name] of OPTIONAL_DISTRIBUTIONS) {
    const values: number[] = [];
    for (const r of records) {
      const v = (r as unknown as Record<string, unknown>)[key];
      if (!r.warmup && typeof v === 'number' && Number.isFinite(v)) values.push(v);
    }
    // All zeros (e.g. no client queueing in a closed loop) would chart as a single point: leave it out.
    if (values.some((v) => v !== 0)) sets.push([key.replace('_ms', ''), name, sortAscending(Float64Array.from(values))]);
  }
  const figures: string[] = [];
  const nines: SeriesPoint[] = [];
  for (const [key, name] of [['ttft_ms', 'TTFT'], ['tpot_ms', 'TPOT'], ['itl_ms', 'ITL'], ['e2el_ms', 'E2EL']] as const) {
    for (const p of ninesOfSorted(positiveOf(samples[key]))) nines.push({ x: p.x, y: p.value, series: name });
  }
  if (nines.length > 0) {
    figures.push(
      chartFigure(
        'latency-nines',
        'Latency by percentile (ms)',
        ninesChart(nines, { yLabel: 'ms (log)', seriesOrder: ['TTFT', 'TPOT', 'ITL', 'E2EL'] }),
        'Each curve runs up to the highest percentile its count supports (p99 needs 100 values, p99.9 1,000). ' +
          `The nines axis spaces p50, p90, p99, p99.9 evenly; values of 0 are left out (log axis)${sample === null ? '.' : `; ${sampleText(sample)}.`}`,
      ),
    );
  }
  for (const [id, name, values] of sets) {
    if (values.length === 0) continue;
    // A log x axis when every value is positive and they span a decade or more: the body and the tail both readable
    // (a linear axis squashes the body under the tail); a narrower range reads better, and gets ticks, on a linear one.
    const lo = values[0]!;
    const hi = values[values.length - 1]!;
    const log = lo > 0 && hi >= 10 * lo;
    const points = cdfOfSorted(values).map((p) => ({ x: p.value, y: p.fraction, series: name }));
    figures.push(
      chartFigure(
        `${id}-cdf`,
        `${name}: distribution (CDF, ms${log ? ', log scale' : ''})`,
        lineChart(points, { xLabel: `${name.split(' ')[0]} (ms${log ? ', log' : ''})`, yLabel: 'fraction of values ≤ x', yPercent: true, xLog: log }),
        `${counted(values.length, 'value')} from ${OPTIONAL_DISTRIBUTIONS.some(([k]) => k.replace('_ms', '') === id) ? '' : 'completed, '}non-warmup requests` +
          (sample === null ? '.' : ` of ${sampleText(sample)}.`),
      ),
    );
  }
  return figures;
}

/**
 * Time series: throughput, requests in flight, TTFT over time, cache hit over time, errors over time. Figures' HTML.
 * With `sample`, counts and rates are scaled by total / size (estimates of the run's) and every note says so.
 */
export function timeSeriesCharts(records: readonly RequestRecord[], sample: RecordSample | null = null): string[] {
  const scale = sample === null || sample.size === 0 ? 1 : sample.total / sample.size;
  const ts = timeSeries(records, { scale });
  if (ts.bins.length === 0) return [];
  const sampleNote =
    sample === null ? '' : ` Estimated from ${sampleText(sample)}: counts, rates and in-flight levels are scaled by ${fmtScale(scale)}.`;
  const last = ts.bins[ts.bins.length - 1]!;
  const context: OverTimeContext = {
    ts,
    sample,
    xDomain: [Math.min(0, ts.bins[0]!.t_sec), last.t_sec + ts.bin_sec],
    binNote: `Bins of ${ts.bin_sec} s; time since the run's start.${sampleNote}`,
    rollNote: `Over a trailing ${ts.window_sec} s window, every ${ts.bin_sec} s; time since the run's start.${sampleNote}`,
  };
  return [...loadOverTimeCharts(context), ...ttftOverTimeChart(context), ...cacheHitOverTimeChart(context), ...errorsOverTimeChart(context)];
}

/** What every over-time chart shares: the series, the sample (if any), the time axis and the notes under the charts. */
interface OverTimeContext {
  ts: TimeSeries;
  sample: RecordSample | null;
  /** The time axis (seconds since the run's start): from 0 (or the first bin) to the last bin's end. */
  xDomain: readonly [number, number];
  /** Note under a chart of single bins. */
  binNote: string;
  /** Note under a chart of the rolling window. */
  rollNote: string;
}

/** Completed requests per second, output tokens per second and requests in flight over the rolling window. */
function loadOverTimeCharts({ ts, xDomain, rollNote }: OverTimeContext): string[] {
  const roll = ts.rolling;
  return [
    chartFigure(
      'request-throughput-over-time',
      'Completed requests per second',
      lineChart(
        roll.map((b) => ({ x: b.t_sec, y: b.request_rate, series: 'requests/s' })),
        { xLabel: 'time (s)', xDomain, yLabel: 'requests/s' },
      ),
      rollNote,
    ),
    chartFigure(
      'token-throughput-over-time',
      'Output tokens per second',
      lineChart(
        roll.map((b) => ({ x: b.t_sec, y: b.output_token_rate, series: 'output tokens/s' })),
        { xLabel: 'time (s)', xDomain, yLabel: 'tokens/s' },
      ),
      rollNote,
    ),
    chartFigure(
      'in-flight-over-time',
      'Requests in flight',
      lineChart(
        roll.flatMap((b) => [
          { x: b.t_sec, y: b.in_flight_mean, series: 'mean' },
          { x: b.t_sec, y: b.in_flight_max, series: 'max' },
        ]),
        { xLabel: 'time (s)', xDomain, yLabel: 'requests', seriesOrder: ['mean', 'max'] },
      ),
      `${rollNote} Mean is time-weighted.`,
    ),
  ];
}

/** TTFT p50 / p90 over the rolling window, with a dot per request when there are few enough; none without TTFTs. */
function ttftOverTimeChart({ ts, sample, xDomain }: OverTimeContext): string[] {
  const ttftLines: SeriesPoint[] = [];
  for (const b of ts.rolling) {
    if (b.ttft_p50_ms !== null) ttftLines.push({ x: b.t_sec, y: b.ttft_p50_ms, series: 'p50' });
    if (b.ttft_p90_ms !== null) ttftLines.push({ x: b.t_sec, y: b.ttft_p90_ms, series: 'p90' });
  }
  if (ttftLines.length === 0) return [];
  const dots = ts.ttft_points.map((p) => ({ x: p.t_sec, y: p.ttft_ms }));
  return [
    chartFigure(
      'ttft-over-time',
      'TTFT over time (ms)',
      dots.length > 0
        ? dotsAndLinesChart(dots, ttftLines, { xLabel: 'send time (s)', xDomain, yLabel: 'TTFT (ms)', dotLabel: 'request', seriesOrder: ['p50', 'p90'] })
        : lineChart(ttftLines, { xLabel: 'send time (s)', xDomain, yLabel: 'TTFT (ms)', seriesOrder: ['p50', 'p90'] }),
      `Percentiles of the requests sent in a trailing ${ts.window_sec} s window; time since the run's start` +
        (sample === null ? '.' : ` (of ${sampleText(sample)}).`),
    ),
  ];
}

/** The server-reported cache hit ratio over the rolling window; none when no request reported cached tokens. */
function cacheHitOverTimeChart({ ts, sample, xDomain }: OverTimeContext): string[] {
  const hit = ts.rolling.flatMap((b) => (b.cache_hit_ratio === null ? [] : [{ x: b.t_sec, y: b.cache_hit_ratio, series: 'cached (server)' }]));
  if (hit.length === 0) return [];
  return [
    chartFigure(
      'cache-hit-over-time',
      'Cache hit ratio over time',
      lineChart(hit, { xLabel: 'send time (s)', xDomain, yLabel: 'cached / prompt', yPercent: true }),
      `Σ cached / Σ prompt tokens of the requests sent in a trailing ${ts.window_sec} s window (server-reported` +
        (sample === null ? ').' : `; ${sampleText(sample)}).`),
    ),
  ];
}

/** Failed requests per bin, stacked by error kind; none when nothing failed. */
function errorsOverTimeChart({ ts, xDomain, binNote }: OverTimeContext): string[] {
  const bars: StackedBar[] = [];
  for (const b of ts.bins) {
    for (const [kind, n] of Object.entries(b.errors)) bars.push({ x1: b.t_sec, x2: b.t_sec + ts.bin_sec, y: n, series: kind });
  }
  if (bars.length === 0) return [];
  return [
    chartFigure(
      'errors-over-time',
      'Failed requests over time, by error kind',
      stackedBarChart(bars, { xLabel: 'end time (s)', xDomain, yLabel: 'failed requests' }),
      binNote,
    ),
  ];
}

/** A scale factor as text: "×10", "×12.5". */
function fmtScale(scale: number): string {
  return `×${Number(scale.toPrecision(4))}`;
}
