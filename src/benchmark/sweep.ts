import { join } from 'node:path';
import { ConfigError } from '../errors/index.js';
import type { SweepPoint } from '../metrics/sweep-point.js';
import { cachePressureCurve, cachePressureKnee, type CachePressureKnee, type CachePressurePoint } from '../metrics/cache-pressure.js';
import type { Summary } from '../metrics/summary.js';
import type { RunOptionsInput } from '../options/run-options.js';
import { planRun, type RunPlan } from '../options/run-plan.js';
import { hasSlos } from '../metrics/goodput.js';
import { writeJsonAtomic, writeTextAtomic } from '../store/atomic-write.js';
import { startSimulatorWorker, type RunningSimulator } from '../sim/index.js';
import { prepareOutputDir, defaultOutputDir, indexedFile } from '../store/output-dir.js';
import { redactSecrets } from '../store/redact.js';
import { runBenchmark, type BenchmarkHooks, type BenchmarkResult } from './run-benchmark.js';
import { writeRepeats } from './repeats.js';
import { withLiveMetrics } from './live-metrics-hooks.js';

export type { SweepPoint } from '../metrics/sweep-point.js';

/** What a sweep varies: closed-loop clients, open-loop session rates, or a search for the highest rate meeting the SLOs. */
export type SweepPlan =
  | { kind: 'concurrency'; values: number[]; cachePressure?: CachePressurePlan; repeat?: number }
  | { kind: 'session-rate'; values: number[]; cachePressure?: CachePressurePlan; repeat?: number }
  | { kind: 'think-time'; values: number[]; cachePressure: CachePressurePlan; repeat?: number }
  | { kind: 'search'; minRate: number; maxRate: number; steps: number; targetShare: number };

/** --cache-pressure: find the knee where the actual hit ratio falls below `share` of the infinite-cache expectation. */
export interface CachePressurePlan {
  share: number;
}

/** The sweep's result: every point in the order run, and for a search the highest rate that met the SLOs. */
export interface SweepResult {
  plan: SweepPlan;
  points: SweepPoint[];
  /** --search: the highest session rate that met the SLOs, or null when even the lowest did not. */
  bestRate: number | null;
  /** --cache-pressure: the curve and its knee; null otherwise. */
  cachePressure: { curve: CachePressurePoint[]; knee: CachePressureKnee } | null;
  outputDir: string;
  files: { summary: string; html: string };
  /** sweep.json's document, as written (what `sweep --json` prints). */
  document: Record<string, unknown>;
}

function meets(summary: Summary, targetShare: number): boolean | null {
  return summary.goodput === null ? null : summary.goodput.share >= targetShare;
}

/** Hooks of a sweep: a run's hooks (given to every point's run), a point's start and its end. */
export interface SweepHooks extends BenchmarkHooks {
  /** A point is about to run: its number from 1, of `total` points (for --search, the most it may take). */
  onPointStart?(info: { index: number; total: number; atMost: boolean; kind: SweepPoint['kind']; value: number }): void;
  onPoint?(point: SweepPoint): void;
}

/**
 * Runs one benchmark per load point against the same server (the built-in simulator is started once for all of
 * them when there is no --url), each into its own folder, then writes sweep.json and sweep.html. With
 * --reset-prefix-cache, and always for a cache curve (--cache-pressure, --think-time), every point starts cold.
 */
export async function runSweep(base: RunOptionsInput, plan: SweepPlan, given: SweepHooks = {}): Promise<SweepResult> {
  const checked = planRun(base); // every problem of the shared options, before anything runs
  if (plan.kind === 'search' && !hasSlos(checked.summary.goodput)) throw new ConfigError('sweep --search needs --goodput SLOs to search against');
  // Think time paces open-loop sessions only: the retention curve needs sessions arriving at a rate.
  if (plan.kind === 'think-time' && checked.load.model.type !== 'open-sessions') throw new ConfigError('sweep --think-time LIST: think time applies to open-loop sessions: add --session-rate R');
  // --metrics-port: one server for every point, each point (and repetition) its own label values.
  const live = await withLiveMetrics(checked.outputs.metricsPort, given);
  try {
    return await sweepPoints(base, checked, plan, live.hooks);
  } finally {
    await live.close();
  }
}

/** runSweep's points, its checks passed and its live metrics (if any) served. */
async function sweepPoints(base: RunOptionsInput, checked: RunPlan, plan: SweepPlan, hooks: SweepHooks): Promise<SweepResult> {
  const outputDir = prepareOutputDir(checked.outputs.outputDir ?? defaultOutputDir());
  let simulator: RunningSimulator | undefined;
  const points: SweepPoint[] = [];
  // What the page's heading names (issue #34): the server as every output shows it, the model its first run served, when.
  const facts: SweepFacts = { url: checked.target.url === undefined ? 'embedded simulator' : redactSecrets(checked.target.url), model: null, createdAt: new Date().toISOString() };
  try {
    if (checked.target.url === undefined) {
      // It serves the model the run asks for, as in runBenchmark.
      simulator = await startSimulatorWorker({ ...checked.simulator, modelName: checked.target.servedModelName ?? checked.target.model });
    }
    const url = checked.target.url ?? simulator!.url;
    const runPoint = async (kind: SweepPoint['kind'], value: number): Promise<SweepPoint> => {
      const dir = join(outputDir, `${String(points.length + 1).padStart(2, '0')}-${kind}-${value}`);
      const total = plan.kind === 'search' ? plan.steps + 2 : plan.values.length;
      hooks.onPointStart?.({ index: points.length + 1, total, atMost: plan.kind === 'search', kind, value });
      // A curve of the cache (--cache-pressure, --think-time) starts each point cold: a cache warm from the point
      // before would read as hits this point's own history cannot explain.
      const cold = plan.kind !== 'search' && plan.cachePressure !== undefined ? { resetPrefixCache: true } : {};
      const load = { ...pointLoad(kind, value), ...cold };
      const repeat = plan.kind === 'search' ? 1 : (plan.repeat ?? 1);
      const runOnce = (outputDir: string, repetition = 1): Promise<BenchmarkResult> => {
        hooks.liveMetrics?.setRun({ point: `${kind}=${value}`, repetition: String(repetition) });
        // --llmd-report: one report per point (and repetition), numbered from 0 as llm-d numbers a results file's stages.
        const llmdReport = base.llmdReport === undefined ? undefined : indexedFile(base.llmdReport, `${points.length}${repeat > 1 ? `_${repetition}` : ''}`);
        return runBenchmark({ ...base, ...load, url, outputDir, outputFile: undefined, statsJsonOutput: undefined, llmdReport }, { ...hooks, llmdStage: points.length });
      };
      const target = plan.kind === 'search' ? plan.targetShare : 1;
      if (repeat <= 1) {
        const result = await runOnce(dir);
        facts.model ??= result.model;
        const point: SweepPoint = { kind, value, outputDir: dir, summary: result.summary, perTurn: result.perTurn, prefixCache: result.prefixCache, meetsSlos: meets(result.summary, target), stopReason: result.load.stopReason };
        points.push(point);
        hooks.onPoint?.(point);
        return point;
      }
      const point = await repeatedPoint(kind, value, dir, repeat, target, runOnce, hooks, facts);
      points.push(point);
      hooks.onPoint?.(point);
      return point;
    };

    let bestRate: number | null = null;
    if (plan.kind === 'search') {
      bestRate = await searchBestRate(plan, runPoint, hooks);
    } else {
      for (const value of plan.values) {
        if (hooks.signal?.aborted) break;
        await runPoint(plan.kind, value);
      }
    }

    return { plan, points, bestRate, outputDir, ...(await writeSweepFiles(outputDir, plan, points, bestRate, facts)) };
  } finally {
    await simulator?.close();
  }
}

/**
 * --repeat N: runs one point N times, as `run --repeat` does, into the point's repeat-1 … repeat-N (a stop ends the
 * series), and writes the repeats' files there. The point's figures are repetition 1's; it meets the SLOs when every
 * repetition does (null when any cannot say).
 */
async function repeatedPoint(
  kind: SweepPoint['kind'],
  value: number,
  dir: string,
  repeat: number,
  target: number,
  runOnce: (outputDir: string, repetition: number) => Promise<BenchmarkResult>,
  hooks: SweepHooks,
  facts: SweepFacts,
): Promise<SweepPoint> {
  const results = [];
  for (let i = 1; i <= repeat && (i === 1 || !hooks.signal?.aborted); i++) results.push(await runOnce(join(dir, `repeat-${i}`), i));
  const first = results[0]!;
  facts.model ??= first.model;
  const { intervals, runs } = await writeRepeats(dir, repeat, results);
  const allMeet = results.map((r) => meets(r.summary, target));
  return {
    kind,
    value,
    outputDir: dir,
    summary: first.summary,
    perTurn: first.perTurn,
    prefixCache: first.prefixCache,
    meetsSlos: allMeet.includes(null) ? null : allMeet.every(Boolean),
    stopReason: results.at(-1)!.load.stopReason,
    repeats: { runs, intervals },
  };
}

/**
 * sweep --search: runs session-rate points from the plan's bounds inwards, at most `steps` past the two ends (a stop
 * ends the search), and returns the highest rate that met the SLOs, or null when even the lowest did not.
 */
async function searchBestRate(plan: Extract<SweepPlan, { kind: 'search' }>, runPoint: (kind: SweepPoint['kind'], value: number) => Promise<SweepPoint>, hooks: SweepHooks): Promise<number | null> {
  // Bisection over the rate: keep the highest rate that met the SLOs and the lowest that did not.
  let good = (await runPoint('session-rate', plan.minRate)).meetsSlos ? plan.minRate : null;
  let bad = plan.maxRate;
  if (good !== null && (await runPoint('session-rate', plan.maxRate)).meetsSlos) good = bad = plan.maxRate;
  for (let step = 0; good !== null && step < plan.steps && bad > good && !hooks.signal?.aborted; step++) {
    const mid = Math.round(((good + bad) / 2) * 1000) / 1000;
    if (mid === good || mid === bad) break;
    if ((await runPoint('session-rate', mid)).meetsSlos) good = mid;
    else bad = mid;
  }
  return good;
}

/** The server (URL as shown, credentials redacted), the model it served and when the sweep started (ISO 8601). */
interface SweepFacts {
  url: string;
  model: string | null;
  createdAt: string;
}

/** Writes sweep.json and sweep.html from the points (in load order), with the cache curve when the plan asks for one. */
async function writeSweepFiles(outputDir: string, plan: SweepPlan, points: readonly SweepPoint[], bestRate: number | null, facts: SweepFacts): Promise<Pick<SweepResult, 'files' | 'cachePressure' | 'document'>> {
  const files = { summary: join(outputDir, 'sweep.json'), html: join(outputDir, 'sweep.html') };
  const ordered = [...points].sort((a, b) => a.value - b.value);
  const pressure = plan.kind !== 'search' && plan.cachePressure !== undefined ? plan.cachePressure : undefined;
  let cachePressure: SweepResult['cachePressure'] = null;
  if (pressure !== undefined) {
    const curve = cachePressureCurve(ordered);
    const capacity = ordered.find((p) => p.prefixCache !== undefined)?.prefixCache?.model.capacity_tokens ?? null;
    cachePressure = { curve, knee: cachePressureKnee(curve, pressure.share, capacity) };
  }
  const document = sweepDocument(plan, ordered, bestRate, cachePressure, facts);
  writeJsonAtomic(files.summary, document);
  const { renderSweepHtml } = await import('../report/sweep-html.js'); // charts: slow to import, needed only here
  writeTextAtomic(files.html, renderSweepHtml(ordered, { plan: describePlan(plan), bestRate, cachePressure, server: facts.url, model: facts.model, createdAt: facts.createdAt }));
  return { files, cachePressure, document };
}


/** sweep.json's document: the plan, each point's figures, and the cache curve (--cache-pressure, or --think-time's retention). */
function sweepDocument(plan: SweepPlan, ordered: readonly SweepPoint[], bestRate: number | null, cachePressure: SweepResult['cachePressure'], facts: SweepFacts): Record<string, unknown> {
  // sweep --think-time: the same curve read as retention, its knee the idle gap the cache stops holding a session at.
  const retention = plan.kind === 'think-time' ? cachePressure : null;
  return {
    url: facts.url,
    model: facts.model,
    created_at: facts.createdAt,
    plan,
    best_rate: bestRate,
    points: ordered.map((p) => ({
      kind: p.kind,
      value: p.value,
      output_dir: p.outputDir,
      stop_reason: p.stopReason,
      meets_slos: p.meetsSlos,
      completed: p.summary.completed,
      failed: p.summary.failed,
      request_throughput: p.summary.request_throughput,
      output_throughput: p.summary.output_throughput,
      goodput: p.summary.goodput,
      ttft_ms: p.summary.metrics.ttft_ms,
      tpot_ms: p.summary.metrics.tpot_ms,
      e2el_ms: p.summary.metrics.e2el_ms,
      e2el_from_scheduled_ms: p.summary.metrics.e2el_from_scheduled_ms,
      // --repeat N: the figures above are repetition 1's; these are each key metric's mean and 95% interval.
      repeats: p.repeats === undefined ? null : { runs: p.repeats.runs, metrics: p.repeats.intervals },
      cache_hit_ratio: p.summary.cache_hit_ratio,
      per_turn_ttft_p50: p.perTurn.map((t) => ({ turn: t.turn, p50: t.ttft_ms?.p50 ?? null })),
      expected_hit_ratio: p.prefixCache?.totals.expected_hit_ratio ?? null,
      expected_hit_ratio_infinite: p.prefixCache?.totals.expected_hit_ratio_infinite ?? null,
    })),
    cache_pressure: plan.kind === 'think-time' ? null : cachePressure,
    retention: retention === null ? null : { ...retention, holds_idle_gap_sec: retention.knee.holds_up_to, loses_at_idle_gap_sec: retention.knee.knee },
  };
}

/**
 * The run options of one point: its clients, its session rate, or its think time (every gap between a session's
 * turns exactly that long: the retention curve, issue #30).
 */
function pointLoad(kind: SweepPoint['kind'], value: number): RunOptionsInput {
  if (kind === 'concurrency') return { numClients: value, maxActiveConversations: undefined };
  if (kind === 'session-rate') return { sessionRate: value };
  return { thinkTime: `constant:${value}` };
}

/** What a point's value counts, for people: `clients`, `sessions/s`, `s of think time`. */
function pointUnit(kind: SweepPoint['kind'] | 'search'): string {
  return kind === 'concurrency' ? 'clients' : kind === 'think-time' ? 's of think time' : 'sessions/s';
}

/** One line describing a sweep plan. */
export function describePlan(plan: SweepPlan): string {
  if (plan.kind === 'search') return `search for the highest session rate in [${plan.minRate}, ${plan.maxRate}]/s with goodput share >= ${plan.targetShare}`;
  const repeat = plan.repeat !== undefined && plan.repeat > 1 ? `, each ${plan.repeat} times` : '';
  return `${plan.kind === 'think-time' ? 'think time (s)' : pointUnit(plan.kind)}: ${plan.values.join(', ')}${repeat}`;
}
