import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';

/**
 * How far the old generation may grow past what a full GC left live before the next full GC: 200% (V8's
 * --heap-growing-percent, a factor of 3). V8's own factor is chosen from the GC's speed against the program's, and a
 * run's small heap marks fast, so V8 picked 1.1-1.2: at `-p 50` a full GC every ~1.6 s, 9-10 in a 4,000-request run
 * (the client floor: 2), whose concurrent marking took 280-380 ms on V8's helper threads and whose pauses, 4-8 ms
 * each, delay every stream's timestamps. With 200%: 3 full GCs, 110-150 ms of marking, +15-25 MB of RSS, and the run's
 * CPU 170 ms less (issue #33; bench/NOTES.md, "Full GCs and the compiler's warm-up"). V8 reads the flag at each full GC,
 * so it holds at run time.
 */
export const HEAP_GROWING_PERCENT = 200;

/**
 * The process's resident memory at a full GC above which V8's own factor is restored (and under half of which
 * HEAP_GROWING_PERCENT is set again): three times a large live heap (long histories, a large trace) is memory a run
 * should not take for a little CPU. Resident memory, not this isolate's heap: the flag is the process's, and with
 * --workers the conversations live in the worker threads' heaps.
 */
export const HEAP_GROWTH_CAP_BYTES = 512 * 2 ** 20;

/** What growHeapFaster reads: `percent` and the cap (defaults above), and the memory in use (default: resident). */
export interface HeapGrowthOptions {
  percent?: number;
  capBytes?: number;
  inUse?: () => number;
}

/**
 * Sets `percent` while the memory in use, read at each full GC of this thread, stays under `capBytes`, and V8's own
 * factor above it. Set by the `chatload` command at its start (cli/v8-flags.ts). Returns the stop.
 */
export function growHeapFaster(options: HeapGrowthOptions = {}): () => void {
  const { percent = HEAP_GROWING_PERCENT, capBytes = HEAP_GROWTH_CAP_BYTES, inUse = () => process.memoryUsage.rss() } = options;
  let fast: boolean | undefined;
  const set = (on: boolean): void => {
    if (on === fast) return;
    fast = on;
    setFlagsFromString(`--heap-growing-percent=${on ? percent : 0}`);
  };
  set(true);
  const observer = new PerformanceObserver((list) => {
    // A gc entry's detail.kind (Node's NodeGCPerformanceDetail), untyped in this @types/node.
    const major = list.getEntries().some((entry) => (entry as { detail?: { kind?: number } | null }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
    if (!major) return;
    set(inUse() < (fast ? capBytes : capBytes / 2));
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
