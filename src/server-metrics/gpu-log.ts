import type { DcgmPage, GpuLabels } from './dcgm.js';

/** Which scrape of a page: the one before the run, one at --scrape-interval-sec during it, or the one after it. */
export type ScrapePhase = 'before' | 'during' | 'after';

/** One GPU at one scrape, as its page said. */
export interface GpuLogSample {
  /** The scraper's tick: 0 before the run, then one per interval (counted when a scrape is skipped or fails too). */
  tick: number;
  phase: ScrapePhase;
  /** performance.now() halfway between the scrape's request and its answer's head: when the page was made, ± half the round trip. */
  atMs: number;
  power_w: number | null;
  util_pct: number | null;
  fb_used_mib: number | null;
  energy_mj: number | null;
}

/** Most samples kept per GPU, as the scraper's series (a long run at the default interval fits). */
const MAX_SAMPLES = 20_000;
/** Nonsense values described in the warning (the count covers them all). */
const MAX_EXAMPLES = 3;

/** What one --scrape-metrics page said about its GPUs over the run; gpu-figures.ts makes results.json's `gpu` of it. */
export class GpuPageLog {
  readonly url: string;
  readonly gpus = new Map<string, { labels: GpuLabels; samples: GpuLogSample[] }>();
  /** Values skipped as nonsense (count), and the first few distinct ones described. */
  rejected = 0;
  readonly rejectedExamples: string[] = [];

  constructor(url: string) {
    this.url = url;
  }

  /** Adds one scrape's GPUs. */
  add(page: DcgmPage, tick: number, phase: ScrapePhase, atMs: number): void {
    for (const gpu of page.gpus) {
      let entry = this.gpus.get(gpu.id);
      if (entry === undefined) this.gpus.set(gpu.id, (entry = { labels: gpu.labels, samples: [] }));
      if (entry.samples.length >= MAX_SAMPLES && phase !== 'after') continue;
      entry.samples.push({ tick, phase, atMs, power_w: gpu.power_w, util_pct: gpu.util_pct, fb_used_mib: gpu.fb_used_mib, energy_mj: gpu.energy_mj });
    }
    this.rejected += page.rejected.length;
    for (const text of page.rejected) if (this.rejectedExamples.length < MAX_EXAMPLES && !this.rejectedExamples.includes(text)) this.rejectedExamples.push(text);
  }
}
