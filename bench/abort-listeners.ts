// A listener per request on the run's stop signal (util/abort-listeners.ts): what one request's add and remove cost
// with N others in flight, through EventTarget's addEventListener/removeEventListener (a walk of the signal's
// listeners each) and through onAbort (a Set), in one run, alternating. Reports µs per add-and-remove and the ratio.
// `node --import tsx bench/abort-listeners.ts [rounds]`
import { setMaxListeners } from 'node:events';
import { onAbort } from '../src/util/abort-listeners.js';
import { median } from './child-cpu.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const OPS = 2_000;

/** µs per add-and-remove of one callback, with `inFlight` others registered on the same signal. */
function measure(inFlight: number, way: 'EventTarget' | 'onAbort'): number {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  for (let i = 0; i < inFlight; i++) {
    if (way === 'EventTarget') controller.signal.addEventListener('abort', () => {}, { once: true });
    else onAbort(controller.signal, () => {});
  }
  const t0 = performance.now();
  for (let i = 0; i < OPS; i++) {
    const callback = (): number => i;
    if (way === 'EventTarget') {
      controller.signal.addEventListener('abort', callback, { once: true });
      controller.signal.removeEventListener('abort', callback);
    } else {
      onAbort(controller.signal, callback)();
    }
  }
  return ((performance.now() - t0) * 1000) / OPS;
}

console.log(`one request's abort listener, added and removed (µs, median of ${ROUNDS} rounds of ${OPS}, after a warm-up round)`);
console.log('| requests in flight | addEventListener + removeEventListener | onAbort + remove | ratio |\n| --- | --- | --- | --- |');
for (const inFlight of [50, 1_000, 10_000]) {
  measure(inFlight, 'EventTarget');
  measure(inFlight, 'onAbort');
  const events: number[] = [];
  const sets: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    events.push(measure(inFlight, 'EventTarget'));
    sets.push(measure(inFlight, 'onAbort'));
  }
  const e = median(events);
  const s = median(sets);
  console.log(`| ${inFlight} | ${e.toFixed(2)} | ${s.toFixed(2)} | ${(s / e).toFixed(3)}x |`);
}
