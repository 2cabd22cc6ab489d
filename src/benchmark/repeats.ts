import { join } from 'node:path';
import type { RepeatInterval } from '../report/repeats.js';
import { writeJsonAtomic, writeTextAtomic } from '../store/atomic-write.js';
import type { BenchmarkResult } from './run-benchmark.js';

/** What writeRepeats wrote, and each key metric's interval. */
export interface RepeatFiles {
  intervals: RepeatInterval[];
  runs: string[];
  files: { json: string; html: string };
}

/**
 * The repetitions of one run (`run --repeat`, or a point of `sweep --repeat`) summed up in `dir`: repeats.json (each
 * key metric's mean and 95% interval across them, and their folders; `chatload compare` reads such a folder as a
 * repeated run) and repeats.html, the same as a page linking each repetition's report.
 */
export async function writeRepeats(dir: string, repeat: number, results: readonly BenchmarkResult[]): Promise<RepeatFiles> {
  // They load the table library and the page: only when repeating.
  const { repeatIntervals } = await import('../report/repeats.js');
  const { renderRepeatsHtml } = await import('../report/repeats-html.js');
  const intervals = repeatIntervals(results.map((r) => r.summary));
  const runs = results.map((r) => r.outputDir);
  const files = { json: join(dir, 'repeats.json'), html: join(dir, 'repeats.html') };
  writeJsonAtomic(files.json, { repeat, completed_repetitions: results.length, runs, metrics: intervals });
  const pages = results.map((r) => ({ dir: r.outputDir, html: r.files.html }));
  const first = results[0]!;
  writeTextAtomic(files.html, renderRepeatsHtml({ intervals, repeat, runs: pages, dir, model: first.model, server: first.url, date: new Date() }));
  return { intervals, runs, files };
}
