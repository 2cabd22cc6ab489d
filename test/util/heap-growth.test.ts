// The old generation's growth between full GCs (util/heap-growth.ts, issue #33): the `chatload` command sets V8's
// --heap-growing-percent at its start, and gives V8 its own factor back while the memory in use at a full GC is above a
// cap (the process's resident memory by default; the first test reads this isolate's heap, which it controls). V8's
// own account is the truth here: with --trace-gc-verbose each full GC prints the factor it applied to the next limit
// ("[HeapController] Limit: old size: ..., new limit: ... (F)").
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { promisify } from 'node:util';

const MODULE = fileURLToPath(new URL('../../src/util/heap-growth.js', import.meta.url));

// 900%: a factor of 10, past the most V8 picks for itself (4), so a line with it is this setting's and no other's.
// `fullGc()` waits until observers have seen the full GC it makes: the script's observer, made after growHeapFaster's,
// is called after it in the same dispatch, so the setting has then followed the memory in use (no timer to outrun on a
// loaded machine).
const FULL_GC = `
import { PerformanceObserver, constants } from 'node:perf_hooks';
let seen = () => {};
// One observer for the script's life: one disconnected inside its callback leaves the next made unfed (Node 20).
new PerformanceObserver((list) => {
  if (list.getEntries().some((entry) => entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) seen();
}).observe({ entryTypes: ['gc'] });
// A GC's entry comes in a later turn of the loop, which a script with nothing pending would not wait for: a timer
// keeps the loop up until it has come.
const fullGc = () => {
  const alive = setInterval(() => {}, 1000);
  const done = new Promise((resolve) => (seen = resolve)).finally(() => clearInterval(alive));
  gc();
  return done;
};
`;
const SCRIPT = `${FULL_GC}
import { getHeapStatistics } from 'node:v8';
import { growHeapFaster } from ${JSON.stringify(MODULE)};
const stop = growHeapFaster({ percent: 900, capBytes: 48 * 2 ** 20, inUse: () => getHeapStatistics().used_heap_size });
await fullGc();
let kept = Array.from({ length: 80 }, (_, i) => Array.from({ length: 20_000 }, (_, j) => ({ i, j })));
await fullGc();
await fullGc();
kept = null;
await fullGc();
await fullGc();
stop();
`;

/** The factors V8 applied at each full GC of `script` (run with --expose-gc), in turn. */
async function fullGcFactors(script: string): Promise<number[]> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--trace-gc-verbose', '--input-type=module', '-e', script], { timeout: 50_000, maxBuffer: 64 * 2 ** 20 });
  return [...stdout.matchAll(/\[HeapController\] Limit: old size: \d+ KB, new limit: \d+ KB \(([\d.]+)\)/g)].map((m) => Number(m[1]));
}

test('chatload sets the heap growing percent, and gives V8 its own factor back while the heap is above the cap', { timeout: 60_000 }, async () => {
  const factors = await fullGcFactors(SCRIPT);
  // Set at once: the first full GC applies it (node's own start makes none). Then V8's own past the cap, then again.
  const restored = factors.findIndex((f) => f !== 10);
  const again = factors.findIndex((f, i) => i > restored && f === 10);
  assert.ok(factors[0] === 10 && restored > 0 && again > restored, `the factors of the full GCs in turn: ${factors.join(', ')}`);
});

test('by default the cap is on the resident memory: over it, V8 has its own factor from the next full GC', { timeout: 60_000 }, async () => {
  const factors = await fullGcFactors(`${FULL_GC}
import { growHeapFaster } from ${JSON.stringify(MODULE)};
const stop = growHeapFaster({ percent: 900, capBytes: 1 });
await fullGc();
await fullGc();
stop();
`);
  assert.deepEqual(factors.map((f) => f === 10), [true, false], `the factors of the full GCs in turn: ${factors.join(', ')}`);
});
