// The live panel's cost (issue 18: under 1% of one core). A stand-in run feeds records at RATE per second (onSend +
// onRecord, as the engine does) for SECONDS, twice in alternation per round: without a live view (the baseline: the
// feeding alone) and with LiveView in panel mode redrawing at ~4 fps into a null terminal 100 columns wide. The
// panel's cost is the CPU difference over the wall time, in % of one core; also the CPU of one frame (snapshot and
// text) and of importing the view's modules (start-up).
//
//   node --import tsx bench/live-panel.ts [--rate 2000] [--seconds 4] [--rounds 3]
import { setTimeout as sleep } from 'node:timers/promises';
import { LiveModel } from '../src/report/live-model.js';
import { panelLines } from '../src/report/live-panel.js';
import { LiveView } from '../src/report/progress.js';
import { makeRecord } from '../test/metrics/record-fixtures.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const RATE = arg('--rate', 2000);
const SECONDS = arg('--seconds', 4);
const ROUNDS = arg('--rounds', 3);

const records = Array.from({ length: 256 }, (_, i) => makeRecord({ ttft_ms: 20 + (i % 50), tpot_ms: 5 + (i % 7), output_num_tokens: 100, cached_tokens: 300, expected_cached_tokens: 320, input_num_tokens: 400 }));
let written = 0;
const nullTerminal = { columns: 100, write: (chunk: string): boolean => ((written += chunk.length), true) };

/** Feeds RATE records a second for SECONDS (in 10 ms batches) to `view`, or to nothing; CPU ms and wall ms. */
async function feed(view: LiveView | undefined): Promise<{ cpuMs: number; wallMs: number }> {
  view?.start({ totalRequests: RATE * SECONDS });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let sent = 0;
  while (performance.now() - t0 < SECONDS * 1000) {
    const due = Math.floor(((performance.now() - t0) / 1000) * RATE);
    for (; sent < due; sent++) {
      view?.onSend();
      view?.onRecord(records[sent % records.length]!);
    }
    await sleep(10);
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  view?.stop();
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// One frame: a snapshot (two rings of 512 latencies sorted) and its text.
const model = new LiveModel(0, { totalRequests: 10_000 });
for (let i = 0; i < 2000; i++) model.onRecord(records[i % records.length]!, i);
const FRAMES = 2000;
const f0 = process.cpuUsage();
for (let i = 0; i < FRAMES; i++) panelLines(model.snapshot(5000 + i), 100);
const f = process.cpuUsage(f0);
const frameUs = (f.user + f.system) / FRAMES;

const base: number[] = [];
const withPanel: number[] = [];
const costs: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const a = await feed(undefined);
  const b = await feed(new LiveView(nullTerminal, 'panel'));
  base.push(a.cpuMs / a.wallMs);
  withPanel.push(b.cpuMs / b.wallMs);
  costs.push((b.cpuMs / b.wallMs - a.cpuMs / a.wallMs) * 100);
}
console.log(`live panel at ${RATE} records/s for ${SECONDS} s, ${ROUNDS} rounds (median):`);
console.log(`  feeding alone (baseline)   ${(median(base) * 100).toFixed(2)}% of one core`);
console.log(`  feeding + panel at ~4 fps  ${(median(withPanel) * 100).toFixed(2)}% of one core  (${(median(withPanel) / median(base)).toFixed(2)}x the baseline)`);
console.log(`  the panel's cost           ${median(costs).toFixed(2)}% of one core (goal: < 1%)`);
console.log(`  one frame (snapshot + text) ${frameUs.toFixed(0)} µs CPU: ${((frameUs * 4) / 10_000).toFixed(3)}% of one core at 4 fps`);
console.log(`  bytes written to the terminal: ${(written / 1024).toFixed(0)} KiB`);
