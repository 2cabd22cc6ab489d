// results.json's `gpu` section (issue #32, part 5): what a --scrape-metrics page of NVIDIA's dcgm-exporter said about
// the GPUs during the run. Types only: server-metrics/gpu-figures.ts computes them, report/ and store/ read them.
// Definitions: docs/METRICS.md ("GPU power and energy").

/** One scrape of a GPU's page (or, in `total`, of every GPU's): when, and what the exporter said. */
export interface GpuSample {
  /** Seconds since the first GPU scrape (the one taken before the run). */
  t_s: number;
  /** DCGM_FI_DEV_GPU_UTIL, %; null when the page had no sane value (in `total`: the mean over the GPUs with one). */
  util_pct: number | null;
  /** DCGM_FI_DEV_POWER_USAGE, W; null when the page had no sane value (in `total`: the sum, null unless every GPU gave one). */
  power_w: number | null;
  /** DCGM_FI_DEV_FB_USED, MiB; null when absent (in `total`: the sum, null unless every GPU gave one). */
  fb_used_mib: number | null;
  /** In `total` only: the GPUs with a sample at this tick (fewer than `total.gpus` when a page missed it). */
  gpus?: number;
}

/** How a GPU's energy was found: its energy counter's delta, or its power integrated over the scrapes. */
export type GpuEnergySource = 'counter' | 'power_integral';

/** The figures of one GPU, or of all of them (`total`). */
export interface GpuFigures {
  /** One per scrape, at --scrape-interval-sec (at most 20,000). */
  samples: GpuSample[];
  /** Time-weighted mean of util_pct over the window (trapezoids); null without a value. */
  mean_util_pct: number | null;
  max_util_pct: number | null;
  /** energy_j / window_s; without energy, the time-weighted mean of power_w. Null without a value. */
  mean_power_w: number | null;
  max_power_w: number | null;
  /** Joules over the window: the energy counter's delta when the page has it, else power integrated (trapezoids). */
  energy_j: number | null;
  /** `mixed` in `total` when GPUs differ. Null when energy_j is. */
  energy_source: GpuEnergySource | 'mixed' | null;
  /**
   * For `power_integral`: the most the trapezoids can be off when power moves monotonically between two scrapes,
   * Σ gap × |ΔP| / 2 over consecutive scrapes (0 for constant power). Null for the counter, or without energy.
   */
  energy_error_bound_j: number | null;
  /** Seconds between the first and the last scrape that gave the energy (without energy: any value): the window covered. Null with fewer than 2. */
  window_s: number | null;
  /** True when the window misses the scrape before the run or the one after it (the page failed): figures cover less. */
  partial: boolean;
}

/** The labels of the exporter (docs/ENGINES.md) a GPU's series carries, each cut to 128 characters (they are server data). */
export interface GpuRowLabels {
  /** `hostname` (`Hostname` before dcgm-exporter #655). */
  hostname: string | null;
  gpu: string | null;
  uuid: string | null;
  device: string | null;
  model_name: string | null;
  /** Kubernetes: the pod the exporter maps the GPU to (`pod`, or `pod_name` with --use-old-namespace). */
  pod: string | null;
  namespace: string | null;
  container: string | null;
}

/** One GPU: its labels on the exporter's page (bounded, as the server sent them) and its figures. */
export interface GpuRow extends GpuFigures, GpuRowLabels {
  /** `hostname/gpu` (or `gpu` alone when the page names no host), unique in the run; MIG instances add `/GPU_I_ID`. */
  id: string;
  /** The --scrape-metrics page it was read from (credentials removed). */
  page: string;
}

/** One --scrape-metrics page that showed DCGM names. */
export interface GpuPage {
  url: string;
  scrapes: number;
  failures: number;
  last_error: string | null;
}

/** results.json's `gpu`: per GPU and in total; null in results.json when no page showed DCGM names. */
export interface GpuResults {
  pages: GpuPage[];
  scrape_interval_s: number;
  gpus: GpuRow[];
  /**
   * Every GPU together: power, energy and framebuffer summed, utilisation the mean over the GPUs; max_util_pct the
   * busiest GPU's. Its samples group the GPUs' scrapes taken at the same tick.
   */
  total: GpuFigures & {
    /** GPUs read. */
    gpus: number;
    /** The run's output tokens / total energy_j; null when the energy is unknown, zero, or partial, or the run resumed. */
    output_tokens_per_joule: number | null;
  };
  /** True when any GPU's figures are partial. */
  partial: boolean;
  /** What went wrong reading the GPU pages (also in results.json `warnings`). */
  warnings: string[];
}
