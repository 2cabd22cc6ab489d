import type { GpuFigures, GpuResults, GpuRow, GpuSample } from '../metrics/gpu-types.js';
import type { GpuLogSample, GpuPageLog } from './gpu-log.js';
import { counted } from '../util/plural.js';

/** A GPU page's log with its scraper's counts (ServerMetricsReport's). */
export interface GpuPageRead {
  log: GpuPageLog;
  scrapes: number;
  failures: number;
  lastError: string | null;
}

/**
 * results.json's `gpu` from the pages that showed dcgm-exporter's names; null when none did. Energy per GPU is its
 * energy counter's delta between the first and the last scrape read (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ), or,
 * without a usable counter, its power integrated over the scrapes by trapezoids (docs/METRICS.md). A page that failed
 * the scrape before or after the run gives partial figures, said in a warning and never filled in.
 * @param outputTokens the run's output tokens, for output_tokens_per_joule; null for a resumed run, whose summary
 *   counts the interrupted run's tokens too, with no energy measured for them (no tokens per joule then, said).
 */
export function gpuResults(pages: readonly GpuPageRead[], intervalMs: number, outputTokens: number | null): GpuResults | null {
  const read = pages.filter((p) => p.log.gpus.size > 0);
  if (read.length === 0) return null;
  let origin = Infinity;
  for (const { log } of read) for (const { samples } of log.gpus.values()) origin = Math.min(origin, samples[0]?.atMs ?? Infinity);
  const warnings: string[] = [];
  const gpus: GpuRow[] = [];
  for (const page of read) {
    for (const [id, { labels, samples }] of page.log.gpus) {
      const { figures, counterWentBack } = figuresOf(samples, origin);
      if (counterWentBack) warnings.push(`--scrape-metrics: GPU ${id} of ${page.log.url}: its energy counter went back (a GPU reset?), so its energy is its power integrated over the scrapes`);
      const { gpu_instance: _instance, ...kept } = labels;
      gpus.push({ id, page: page.log.url, ...kept, ...figures });
    }
    warnings.push(...pageWarnings(page, gpus.filter((g) => g.page === page.log.url)));
  }
  const total = totalOf(gpus, read, origin, outputTokens);
  if (outputTokens === null && total.energy_j !== null) warnings.push("--scrape-metrics: a resumed run's output tokens include the interrupted run's, whose GPU energy was not measured: no tokens per joule");
  return { pages: read.map((p) => ({ url: p.log.url, scrapes: p.scrapes, failures: p.failures, last_error: p.lastError })), scrape_interval_s: intervalMs / 1000, gpus, total, partial: total.partial, warnings };
}

/** A page's failed scrapes and nonsense values, said plainly. */
function pageWarnings(page: GpuPageRead, rows: readonly GpuRow[]): string[] {
  const out: string[] = [];
  const { url } = page.log;
  const partial = rows.filter((r) => r.partial);
  const failed = page.failures > 0 ? `failed ${page.failures} of ${counted(page.scrapes, 'scrape')} (last: ${page.lastError ?? 'no answer'})` : 'had no reading of some GPU';
  if (partial.length > 0) {
    const covered = partial.map((r) => `${r.id} ${r.window_s === null ? 'no window' : `${r.window_s.toFixed(1)} s`}`).join(', ');
    out.push(`--scrape-metrics: the GPU page ${url} ${failed}: the figures of ${counted(partial.length, 'GPU')} miss the scrape before or after the run (covered: ${covered}) and are marked partial; no tokens per joule`);
  } else if (page.failures > 0) {
    out.push(`--scrape-metrics: the GPU page ${url} ${failed}; the energy spans the gaps (a longer gap, a looser bound on the integrated power)`);
  }
  if (page.log.rejected > 0) {
    out.push(`--scrape-metrics: the GPU page ${url} had ${counted(page.log.rejected, 'value')} out of range, skipped: ${page.log.rejectedExamples.join(', ')}${page.log.rejected > page.log.rejectedExamples.length ? ', ...' : ''}`);
  }
  return out;
}

/** ∫ of `value` over the samples that have one, by trapezoids (ms → s), with its bound and the time it spans. */
function trapezoids(samples: readonly GpuLogSample[], value: (s: GpuLogSample) => number | null): { integral: number; bound: number; spanS: number; first?: GpuLogSample; last?: GpuLogSample } {
  let integral = 0;
  let bound = 0;
  let prev: GpuLogSample | undefined;
  let first: GpuLogSample | undefined;
  for (const s of samples) {
    const v = value(s);
    if (v === null) continue;
    if (prev !== undefined) {
      const gapS = (s.atMs - prev.atMs) / 1000;
      const p = value(prev)!;
      integral += (gapS * (p + v)) / 2;
      bound += (gapS * Math.abs(v - p)) / 2;
    }
    first ??= s;
    prev = s;
  }
  const spanS = first === undefined || prev === undefined ? 0 : (prev.atMs - first.atMs) / 1000;
  return { integral, bound, spanS, first, last: prev };
}

/** The energy counter's delta (J) when the first and last scrapes have it and it never went back; else undefined. */
function counterEnergy(samples: readonly GpuLogSample[]): { joules?: number; wentBack: boolean; first?: GpuLogSample; last?: GpuLogSample } {
  let prev: number | undefined;
  for (const s of samples) {
    if (s.energy_mj === null) continue;
    if (prev !== undefined && s.energy_mj < prev) return { wentBack: true };
    prev = s.energy_mj;
  }
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (first?.energy_mj == null || last?.energy_mj == null || first === last) return { wentBack: false };
  return { joules: (last.energy_mj - first.energy_mj) / 1000, wentBack: false, first, last };
}

function maxOf(samples: readonly GpuLogSample[], value: (s: GpuLogSample) => number | null): number | null {
  let max: number | null = null;
  for (const s of samples) {
    const v = value(s);
    if (v !== null && (max === null || v > max)) max = v;
  }
  return max;
}

/** A time-weighted mean over the samples (the one value when there is one); null without a value. */
function meanOf(samples: readonly GpuLogSample[], value: (s: GpuLogSample) => number | null): number | null {
  const t = trapezoids(samples, value);
  if (t.first === undefined) return null;
  return t.spanS > 0 ? t.integral / t.spanS : value(t.first);
}

/** One GPU's figures from its samples. */
function figuresOf(samples: readonly GpuLogSample[], origin: number): { figures: GpuFigures; counterWentBack: boolean } {
  const power = (s: GpuLogSample): number | null => s.power_w;
  const counter = counterEnergy(samples);
  const integral = trapezoids(samples, power);
  const byCounter = counter.joules !== undefined;
  const energy = byCounter ? counter.joules! : integral.first !== undefined && integral.spanS > 0 ? integral.integral : null;
  // The window is the energy's; without energy (a page with no power field), the samples'.
  const first = byCounter ? counter.first : energy !== null ? integral.first : samples[0];
  const last = byCounter ? counter.last : energy !== null ? integral.last : samples[samples.length - 1];
  const windowS = first === undefined || last === undefined || last === first ? null : (last.atMs - first.atMs) / 1000;
  const partial = first?.phase !== 'before' || last?.phase !== 'after';
  return {
    counterWentBack: counter.wentBack,
    figures: {
      samples: samples.map((s) => ({ t_s: round((s.atMs - origin) / 1000), util_pct: s.util_pct, power_w: s.power_w, fb_used_mib: s.fb_used_mib })),
      mean_util_pct: meanOf(samples, (s) => s.util_pct),
      max_util_pct: maxOf(samples, (s) => s.util_pct),
      mean_power_w: energy !== null && windowS !== null && windowS > 0 ? energy / windowS : meanOf(samples, power),
      max_power_w: maxOf(samples, power),
      energy_j: energy,
      energy_source: energy === null ? null : byCounter ? 'counter' : 'power_integral',
      energy_error_bound_j: energy === null || byCounter ? null : integral.bound,
      window_s: windowS,
      partial,
    },
  };
}

/** Every GPU together; its samples group the GPUs' scrapes of the same tick (the one after the run last). */
function totalOf(gpus: readonly GpuRow[], pages: readonly GpuPageRead[], origin: number, outputTokens: number | null): GpuResults['total'] {
  const ticks = new Map<number, { t: number[]; util: number[]; power: number[]; fb: number[]; gpus: number }>();
  for (const { log } of pages) {
    for (const { samples } of log.gpus.values()) {
      for (const s of samples) {
        const key = s.phase === 'after' ? Number.MAX_SAFE_INTEGER : s.tick;
        let group = ticks.get(key);
        if (group === undefined) ticks.set(key, (group = { t: [], util: [], power: [], fb: [], gpus: 0 }));
        group.t.push((s.atMs - origin) / 1000);
        if (s.util_pct !== null) group.util.push(s.util_pct);
        if (s.power_w !== null) group.power.push(s.power_w);
        if (s.fb_used_mib !== null) group.fb.push(s.fb_used_mib);
        group.gpus += 1;
      }
    }
  }
  const samples: GpuSample[] = [...ticks.entries()]
    .sort((a, b) => a[0] - b[0])
    // A sum of some GPUs is not the total: null unless every GPU gave a value at that tick.
    .map(([, g]) => ({ t_s: round(mean(g.t)!), util_pct: mean(g.util), power_w: sumOfAll(g.power, gpus.length), fb_used_mib: sumOfAll(g.fb, gpus.length), gpus: g.gpus }));
  const all = <T>(pick: (g: GpuRow) => T | null): T[] | null => (gpus.every((g) => pick(g) !== null) ? gpus.map((g) => pick(g)!) : null);
  const energies = all((g) => g.energy_j);
  const energy = energies === null ? null : energies.reduce((a, b) => a + b, 0);
  const sources = new Set(gpus.map((g) => g.energy_source));
  const bounds = sources.size === 1 && sources.has('power_integral') ? all((g) => g.energy_error_bound_j) : null;
  const powers = all((g) => g.mean_power_w);
  const windows = all((g) => g.window_s);
  const partial = gpus.some((g) => g.partial);
  const utils = gpus.map((g) => g.mean_util_pct).filter((u): u is number => u !== null);
  const maxima = gpus.map((g) => g.max_util_pct).filter((u): u is number => u !== null);
  const sums = samples.map((s) => s.power_w).filter((p): p is number => p !== null);
  return {
    gpus: gpus.length,
    samples,
    mean_util_pct: mean(utils),
    max_util_pct: maxima.length === 0 ? null : Math.max(...maxima),
    mean_power_w: powers === null ? null : powers.reduce((a, b) => a + b, 0),
    max_power_w: sums.length === 0 ? null : Math.max(...sums),
    energy_j: energy,
    energy_source: energy === null ? null : sources.size === 1 ? gpus[0]!.energy_source : 'mixed',
    energy_error_bound_j: bounds === null ? null : bounds.reduce((a, b) => a + b, 0),
    window_s: windows === null ? null : Math.max(...windows),
    partial,
    output_tokens_per_joule: outputTokens !== null && energy !== null && energy > 0 && !partial ? outputTokens / energy : null,
  };
}

/** The sum of `values` when there is one per GPU (`count`); null otherwise. */
function sumOfAll(values: readonly number[], count: number): number | null {
  return values.length === count ? values.reduce((a, b) => a + b, 0) : null;
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Seconds to the millisecond. */
function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
